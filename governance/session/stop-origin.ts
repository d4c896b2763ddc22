import type { SessionRecord } from "./session-record.ts";

/** Who asked for a stop: the user (CLI, dashboard, a primary's tool), or governance itself (a budget, the loop guard). */
export type StopOrigin = "user" | "governance";

/**
 * Who asked for a stop, as every text says it (issue 28 §2): governance's own stops (a budget, the loop guard, a tree
 * budget) are requested `by: "governance"`; every other stop came from the user (the CLI, the dashboard, or a
 * primary agent's `governance_stop` tool acting for the user). Only the user's stop says "the user".
 */
export const GOVERNANCE_REQUESTER = "governance";

export function stopOrigin(stop: { requestedBy: string } | null | undefined): StopOrigin {
  return stop?.requestedBy === GOVERNANCE_REQUESTER ? "governance" : "user";
}

/** Request ids of governance's own stops: a budget's, the loop guard's. */
export const BUDGET_STOP_PREFIX = "budget-";
export const LOOP_STOP_PREFIX = "loop-";

/** Why a session was aborted, as audits (`session_aborted.cause`) and metrics (`governance.escapes`) read it. */
export type AbortCause = "user" | "stop" | "budget" | "loop";

/**
 * Who aborted a session (issue 26 item 4). Governance did when its own stop had sent an abort: the hard stop of a
 * stopping session (an attempt is recorded), or the abort that follows L3 or a refused call of a stopped session —
 * then `budget` for a budget's stop, `loop` for a loop guard's, `stop` for any other. Otherwise `user`: Escape, or
 * another client's abort, also while a stop was pending. Only `user` counts as an Escape.
 */
export function abortedBy(record: SessionRecord): AbortCause {
  const ours = record.stop !== null && ((record.control === "stopping" && record.stop.abortAttempts > 0) || record.control === "stopped");
  if (!ours) return "user";
  const id = record.stop?.requestId ?? "";
  if (id.startsWith(BUDGET_STOP_PREFIX)) return "budget";
  if (id.startsWith(LOOP_STOP_PREFIX)) return "loop";
  return "stop";
}
