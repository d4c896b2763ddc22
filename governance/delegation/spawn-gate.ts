import type { GovernanceConfig } from "../config/config.ts";
import { audit, type Effect, type Step } from "../session/effects.ts";
import type { SessionRecord } from "../session/session-record.ts";
import type { HostAgentSettings } from "../config/project-agents.ts";
import { PROJECT_CONFIG_SHOWN } from "../config/project-agents.ts";
import { buildLogOnlyNote, entryLines, notNamedSentence } from "./delegation-messages.ts";
import { type ContinuedSession, checkSpawn, type SpawnPlacement } from "./delegation-policy.ts";

/**
 * What happens to a `task` call (seed 003 delegation rules, seed 001 emergency halt): allowed; allowed with a note
 * because enforcement is `log-only`; blocked (leaf caller, a `task_id` naming a session that is not the caller's own
 * subagent or one a stop ended, target outside the allow-list); or halted (beyond the max depth). A refusal counts a
 * violation on the caller's record and is audited whatever the mode.
 */
export type SpawnDecision = ({ kind: "allowed"; note: string | null } & SpawnPlacement) | { kind: "blocked" | "halted"; message: string };

export type SpawnStep = Step & { decision: SpawnDecision };

export function decideSpawn(
  record: SessionRecord | undefined,
  request: {
    targetAgent: string;
    /** A `task_id` continuation: the session it names, as the host and governance know it. */
    continues?: ContinuedSession;
    config: Pick<GovernanceConfig, "agents" | "defaultRole" | "delegation" | "enforcement">;
    /** The host's settings of an agent, when it reported them (the lines a `not_named` refusal suggests). */
    hostAgent?: (name: string) => HostAgentSettings | undefined;
  },
): SpawnStep {
  const { targetAgent, config, continues } = request;
  const callerAgent = record?.agent ?? null;
  const callerDepth = record?.depth ?? 0;
  const callerHost = callerAgent === null ? undefined : request.hostAgent?.(callerAgent);
  const check = checkSpawn({
    callerId: record?.sessionId ?? null,
    callerAgent,
    callerDepth,
    targetAgent,
    config,
    ...(continues ? { continues } : {}),
    ...(callerHost ? { callerHost } : {}),
  });
  const placement: SpawnPlacement = { childDepth: check.childDepth, childLevel: check.childLevel, targetRole: check.targetRole };
  if (check.ok) return { next: record, effects: [], decision: { kind: "allowed", note: null, ...placement } };

  const enforce = config.enforcement === "enforce";
  const halt = check.kind === "max_depth";
  const data = {
    kind: check.kind,
    callerAgent,
    targetAgent,
    callerDepth,
    childDepth: check.childDepth,
    enforced: enforce,
    ...(continues ? { continues: continues.sessionId } : {}),
    ...(check.add ? { add: check.add } : {}),
  };
  const effects: Effect[] = [audit(halt ? "emergency_halt" : "delegation_blocked", data)];
  const next = record ? { ...record, counters: { ...record.counters, violations: record.counters.violations + 1 } } : record;
  if (!enforce) {
    const note = buildLogOnlyNote({ kind: check.kind, callerAgent, targetAgent });
    return { next, effects, decision: { kind: "allowed", note, ...placement } };
  }
  const who = callerAgent ?? "agent";
  effects.push(
    halt
      ? { type: "toast", message: `EMERGENCY HALT: ${who} tried to delegate beyond depth ${config.delegation.maxDepth}`, variant: "error" }
      : check.add && callerAgent !== null
        ? {
            type: "toast",
            message: [notNamedSentence({ callerAgent, configFile: PROJECT_CONFIG_SHOWN }), ...entryLines(check.add)].join("\n"),
            variant: "warning",
          }
        : {
            type: "toast",
            message: `Delegation blocked: ${who} → ${continues ? `${targetAgent} (task_id ${continues.sessionId})` : targetAgent}`,
            variant: "warning",
          },
  );
  return { next, effects, decision: { kind: halt ? "halted" : "blocked", message: check.message } };
}
