import { isRunningSession } from "./running.ts";
import type { SessionRecord, StaleKind } from "./session-record.ts";

const HOUR = 3_600_000;

/**
 * When a session's state counts as stale (seed 003 S1 "stale state warnings"). Fixed, not configured: they only decide
 * when a warning is shown, never what governance allows.
 * - `todoToolCalls` 30: a session with open todos that made 30 tool calls without changing its todo list is not
 *   tracking its work there (a typical step of work is 5–15 calls; three such steps without a tick is the smell);
 * - `phaseMs` 24 h: a session that has worked a whole day under one phase should ask whether the phase in
 *   governance.yaml still says where the project is;
 * - `activityMs` 1 h: a session whose turn is under way (its record is running, not idle) but that has done nothing
 *   for an hour — no model step, no tool call — is stuck in a tool or lost; orphan detection (10 min) only covers
 *   children that are also not busy, this covers any session, root included.
 */
export const STALE_AFTER = { todoToolCalls: 30, phaseMs: 24 * HOUR, activityMs: HOUR } as const;

export type StaleWarning =
  | { kind: "todo"; open: number; total: number; toolCalls: number }
  | { kind: "phase"; phase: string; forMs: number }
  | { kind: "activity"; idleMs: number };

/**
 * The stale-state warnings of a record at `now`, in a fixed order (todo, phase, activity). Pure. Only a running
 * session is stale: an idle, interrupted or ended one is not working under old state, it is not working.
 */
export function staleWarnings(r: SessionRecord, now: number): StaleWarning[] {
  if (!isRunningSession(r)) return [];
  const out: StaleWarning[] = [];
  if (r.todo && r.todo.open > 0) {
    const since = r.counters.toolCalls - r.todo.atToolCalls;
    if (since >= STALE_AFTER.todoToolCalls) out.push({ kind: "todo", open: r.todo.open, total: r.todo.total, toolCalls: since });
  }
  if (r.phase && now - r.phase.at >= STALE_AFTER.phaseMs) out.push({ kind: "phase", phase: r.phase.phase, forMs: now - r.phase.at });
  if (now - r.lastActivityAt >= STALE_AFTER.activityMs) out.push({ kind: "activity", idleMs: now - r.lastActivityAt });
  return out;
}

/**
 * The warnings the session's own model is told in its status note: the todo list (any level) and the phase (a root's
 * model only: a subagent cannot settle the project's phase, its coordinator can). Never `activity`: at a model step
 * the session is active by definition — that one is for the user (`status`, the dashboard).
 */
export function modelStaleWarnings(r: SessionRecord, now: number): StaleWarning[] {
  return staleWarnings(r, now).filter((w) => w.kind === "todo" || (w.kind === "phase" && r.level === 1));
}

/** The kinds now stale, as the record keeps them (raised once, audited once, until they clear). */
export function staleKinds(r: SessionRecord, now: number): StaleKind[] {
  return staleWarnings(r, now).map((w) => w.kind);
}
