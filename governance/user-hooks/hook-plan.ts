import path from "node:path";
import { HOOK_TIMEOUT, type HookAction, type HookEvent, type HooksConfig } from "../config/hooks-config.ts";
import { cleanLine } from "../text-safety/untrusted-text.ts";
import { exportedFields } from "../telemetry/telemetry-map.ts";

/**
 * What the user's hooks do with one audit event (issue 44 item 2, docs/hooks.md, decisions/0068): which actions it
 * triggers, what they receive, in which order they run, and what a failure leaves in the audit log. Pure; the runner
 * (plugin/runtime/user-hooks.ts) spawns the commands and sends the requests.
 */

/** The JSON a hook receives: a command on its stdin, a webhook as the POST body. Fields are only added within a version. */
export type HookPayload = {
  version: 1;
  /** The audit event type (`session_stopped`, `budget_exceeded`, …). */
  event: HookEvent;
  /** When governance recorded it, ISO 8601 UTC. */
  at: string;
  /** The project's folder name (not its path: a path names the user). */
  project: string;
  sessionId?: string;
  /** The event's fields that may leave the machine: the telemetry export's rule (ids, agent, level, budget figures; no free text, no paths). */
  fields: Record<string, string | number | boolean>;
  /** One line for a person (a desktop notice, a chat message: Slack and Mattermost webhooks show `text`). */
  text: string;
};

/** One action to run for one event. `key` names the action (event and position): runs of one action never overlap. */
export type HookRun = { key: string; event: HookEvent; index: number; action: HookAction; timeoutMs: number; body: string };

/**
 * The payload of one event. Built from an allow-list ({@link exportedFields}): the stop reason a user typed, guidance
 * text, error messages, tool arguments, file paths and the user name never leave; strings are cleaned (controls
 * removed, anything shaped like a secret redacted) and clipped. The signing key, environment values and telemetry
 * headers are in no audit line to begin with.
 */
export function hookPayload(type: HookEvent, data: Record<string, unknown>, at: number, projectDir: string): HookPayload {
  const fields = exportedFields(data);
  const sessionId = typeof fields.sessionId === "string" ? fields.sessionId : undefined;
  const { sessionId: _s, ...rest } = fields;
  const project = cleanLine(path.basename(projectDir), 80) || "project";
  return {
    version: 1,
    event: type,
    at: new Date(at).toISOString(),
    project,
    ...(sessionId ? { sessionId } : {}),
    fields: rest,
    text: summaryLine(type, project, fields),
  };
}

/** The keys a one-line summary names, in this order, when the event has them. */
const SUMMARY_KEYS = ["agent", "scope", "key", "used", "limit", "how", "origin", "level", "targetAgent", "missing", "count"] as const;

function summaryLine(type: string, project: string, fields: Record<string, string | number | boolean>): string {
  const parts = SUMMARY_KEYS.filter((k) => fields[k] !== undefined).map((k) => `${k} ${String(fields[k])}`);
  const session = typeof fields.sessionId === "string" ? ` in session ${fields.sessionId}` : "";
  return cleanLine(`opencode-governance [${project}] ${type.replaceAll("_", " ")}${session}${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`, 300);
}

/** What governance's record of the event's session says about it: which agent it runs and under which parent. */
export type SessionFacts = { agent: string | null; parentId: string | null };

/**
 * The event's data with the session's agent and parent filled in where the audit line leaves them out: a stop's
 * `session_hard_stopped` line names only the request, yet a hook must be able to say which agent was stopped. What
 * the line itself says wins.
 */
export function withSessionFacts(data: Record<string, unknown>, session: SessionFacts | undefined): Record<string, unknown> {
  if (!session) return data;
  return {
    ...(session.agent ? { agent: session.agent } : {}),
    ...(session.parentId ? { parentId: session.parentId } : {}),
    ...data,
  };
}

/**
 * The runs one audit event triggers: each action the user's `hooks` lists under its type, in the file's order. None
 * for `hook_failed` (a failing hook must not feed itself) or a type no hook names.
 */
export function hookRuns(hooks: HooksConfig, type: string, data: Record<string, unknown>, at: number, projectDir: string, session?: SessionFacts): HookRun[] {
  if (type === "hook_failed" || !Object.hasOwn(hooks, type)) return [];
  const actions = hooks[type as HookEvent] ?? [];
  if (actions.length === 0) return [];
  const body = JSON.stringify(hookPayload(type as HookEvent, withSessionFacts(data, session), at, projectDir));
  return actions.map((action, index) => ({
    key: `${type}#${index}`,
    event: type as HookEvent,
    index,
    action,
    timeoutMs: action.timeout ?? HOOK_TIMEOUT.default,
    body,
  }));
}

/** Runs of one action waiting behind the one that runs; more and the oldest waiting is dropped (audited). */
export const MAX_WAITING = 20;

/** One action's queue: at most one run at a time, the rest in the order governance recorded the events. */
export type HookLane = { running: boolean; waiting: readonly HookRun[] };
export const IDLE_LANE: HookLane = { running: false, waiting: [] };

/**
 * A run arrives: it starts now when its action is idle, else waits its turn. A burst (a tree budget stopping ten
 * sessions) never runs one command ten times at once, and a hook that hangs holds back only its own action.
 */
export function enqueueRun(lane: HookLane, run: HookRun): { lane: HookLane; start: HookRun | null; dropped: HookRun | null } {
  if (!lane.running) return { lane: { running: true, waiting: lane.waiting }, start: run, dropped: null };
  const waiting = [...lane.waiting, run];
  const dropped = waiting.length > MAX_WAITING ? (waiting.shift() ?? null) : null;
  return { lane: { running: true, waiting }, start: null, dropped };
}

/** A run ended: the next waiting run starts, or the action is idle. */
export function runEnded(lane: HookLane): { lane: HookLane; start: HookRun | null } {
  const [next, ...rest] = lane.waiting;
  return next ? { lane: { running: true, waiting: rest }, start: next } : { lane: IDLE_LANE, start: null };
}

/** How a run ended. `exit`/`signal`: the command's own failure; `timeout`: killed at its timeout; `dropped`: never ran. */
export type HookOutcome =
  | { ok: true }
  | { ok: false; why: "timeout" | "spawn" | "network" | "dropped" }
  | { ok: false; why: "exit"; exitCode: number }
  | { ok: false; why: "signal" }
  | { ok: false; why: "http"; status: number };

/**
 * The `hook_failed` line of a failed run, or null for a success. It names the event and the action's position and
 * kind — never the command or the URL (a chat webhook's URL is its secret, and the audit log is in the project).
 */
export function hookFailure(run: HookRun, outcome: HookOutcome, ms: number): Record<string, unknown> | null {
  if (outcome.ok) return null;
  return {
    event: run.event,
    action: run.index,
    target: "url" in run.action ? "url" : "command",
    why: outcome.why,
    ...(outcome.why === "exit" ? { exitCode: outcome.exitCode } : {}),
    ...(outcome.why === "http" ? { status: outcome.status } : {}),
    ms: Math.max(0, Math.round(ms)),
    timeoutMs: run.timeoutMs,
  };
}
