import { audit, type Effect } from "../session/effects.ts";
import { buildConcurrencyRefusal } from "./budget-notices.ts";
import type { ConcurrencyConfig } from "../config/budget-config.ts";

export type RunningSubagent = { sessionId: string; agent: string | null };

export type ConcurrencyDecision = { ok: true } | { ok: false; scope: "parent" | "project"; message: string; effects: Effect[] };

/**
 * May this session start one more subagent? `parentRunning` are the caller's running subagents (spawns allowed but
 * not yet created included, so parallel `task` calls of one step are counted), `projectRunning` how many run in the
 * project. Refused beyond `perParent` / `perProject`, with a text the model can act on, like the depth halt.
 */
export function decideConcurrency(input: {
  parentRunning: readonly RunningSubagent[];
  projectRunning: number;
  projectSample: readonly RunningSubagent[];
  config: ConcurrencyConfig;
  targetAgent: string;
}): ConcurrencyDecision {
  const { config } = input;
  const parentFull = input.parentRunning.length >= config.perParent;
  const projectFull = input.projectRunning >= config.perProject;
  if (!parentFull && !projectFull) return { ok: true };
  const scope = parentFull ? "parent" : "project";
  const limit = parentFull ? config.perParent : config.perProject;
  const running = parentFull ? input.parentRunning : input.projectSample;
  // One count for the text, the audit and the toast: what is running in the scope that is full (not the sample shown).
  const count = parentFull ? input.parentRunning.length : input.projectRunning;
  const message = buildConcurrencyRefusal({ scope, limit, count, running });
  const effects: Effect[] = [
    audit("spawn_refused_concurrency", { scope, limit, running: count, targetAgent: input.targetAgent }),
    {
      type: "toast",
      message: `Spawn refused: ${count} subagents already running (${scope === "parent" ? "this session" : "project"}; limit ${limit}).`,
      variant: "warning",
    },
  ];
  return { ok: false, scope, message, effects };
}

/** Subagents shown in a project-wide refusal: a sample, so the text stays short however many run. */
export const PROJECT_SAMPLE = 10;

/**
 * A spawn allowed whose subagent does not run yet: who asked, for which agent, and — a `task` call with `task_id` —
 * the existing session it continues (the host creates no session for it).
 */
export type Reservation = { parentId: string; agent: string; continues?: string };

/**
 * The concurrency decision over what this process knows runs: `running` children (by session id, with their parent)
 * and `spawning` reservations (spawns allowed whose subagent does not run yet, shown as "(starting)"). Both count,
 * for the parent and for the project, so parallel `task` calls of one step cannot slip past the limit.
 */
export function decideConcurrentSpawn(input: {
  parentId: string;
  running: ReadonlyMap<string, { parentId: string; agent: string | null }>;
  spawning: Iterable<Reservation>;
  config: ConcurrencyConfig;
  targetAgent: string;
}): ConcurrencyDecision {
  const parentRunning: RunningSubagent[] = [];
  const sample: RunningSubagent[] = [];
  let projectRunning = 0;
  for (const [id, r] of input.running) {
    projectRunning++;
    if (r.parentId === input.parentId) parentRunning.push({ sessionId: id, agent: r.agent });
    if (sample.length < PROJECT_SAMPLE) sample.push({ sessionId: id, agent: r.agent });
  }
  for (const s of input.spawning) {
    projectRunning++;
    if (s.parentId === input.parentId) parentRunning.push({ sessionId: "(starting)", agent: s.agent });
    if (sample.length < PROJECT_SAMPLE) sample.push({ sessionId: "(starting)", agent: s.agent });
  }
  return decideConcurrency({ parentRunning, projectRunning, projectSample: sample, config: input.config, targetAgent: input.targetAgent });
}

/**
 * Which reservation a subagent that starts running takes, so that it counts once: a session a `task_id` continues
 * takes the reservation naming it (whichever session asked: the host continues any session it is given); a session
 * just created takes one of its parent's — first one that continues nothing (a `task_id` naming no session makes the
 * host create one). A session that is busy again on its own (a background task's next step) takes none.
 */
export function reservationTaken(
  spawning: Iterable<readonly [callId: string, Reservation]>,
  child: { sessionId: string; parentId: string; created: boolean },
): string | undefined {
  let fallback: string | undefined;
  for (const [callId, r] of spawning) {
    if (r.continues === child.sessionId) return callId;
    if (!child.created || r.parentId !== child.parentId) continue;
    if (r.continues === undefined) return callId;
    fallback ??= callId;
  }
  return fallback;
}
