import * as z from "../zod.ts";
import { audit } from "../session/effects.ts";
import { stopOrigin } from "../session/stop-origin.ts";
import { type SessionRecord, StopHow, StopLevel } from "../session/session-record.ts";
import { stopDeadline } from "./stop-deadline.ts";
import { type ConfirmResult, confirmStopped, type StopEffect, tellParent } from "../session/stopped.ts";

/**
 * The stop ladder of seeds 000/001 as pure functions over a {@link SessionRecord}; no I/O, no clock.
 *
 * Soft path: every tool result of a `stopping` session delivers the next level — L1 (directive + original output),
 * L2 (directive only), L3 (terminated: control `stopped`, the session is aborted through the SDK, the parent is told).
 * Hard path: if no tool result comes before `stop.deadlineAt`, the adapter aborts through the SDK and checks the
 * session went idle; one retry; then it gives up loudly. Compliance: a turn that ends (idle) while stopping = stopped.
 *
 * Invariants: a session is stopped exactly once — every path into `stopped` goes through {@link confirmStopped},
 * whose `stoppedNow` is true for exactly one call. The parent is told once per stop: `notify_parent` is emitted only
 * by the step that sets `stop.parentNotified` (the hard stop tells it before the abort, else the final stop does).
 */

/** Time a terminated session gets to read the ❌ result before the SDK abort. */
export const L3_GRACE_MS = 1_500;
/** A stopped session that makes another tool call is aborted almost at once. */
export const BLOCKED_CALL_ABORT_MS = 50;

export { StopHow };
export { type AbortCause, abortedBy } from "../session/stop-origin.ts";
export { type ConfirmResult, confirmStopped, type StopEffect } from "../session/stopped.ts";

export const StopRequest = z.object({
  requestId: z.string().min(1),
  at: z.number().int(),
  level: StopLevel,
  reason: z.string(),
  by: z.string(),
  /** Time the soft ladder gets before the hard stop (config `stop.deadline`, default 5 s); see stop-deadline.ts. */
  deadlineMs: z.number().int().nonnegative(),
  /**
   * Absolute cap from the request (config `stop.maxWait`): signs of life after a directive reached the session move
   * the deadline, never past this. Absent = `deadlineMs` (a fixed deadline).
   */
  maxWaitMs: z.number().int().nonnegative().optional(),
});
export type StopRequest = z.infer<typeof StopRequest>;

/**
 * - `started`: control is now `stopping`.
 * - `escalated`: a different request asked for a higher level than the one pending; the pending level is raised
 *   and the earlier deadline kept (a stricter request never waits longer).
 * - `already_stopping` / `already_stopped`: idempotent, nothing changed (same request again, a lower-or-equal level,
 *   or a session that is already stopped: one stopped record however many signals).
 * - `not_running`: control `completed`/`orphaned`; nothing to stop.
 */
export const StartOutcome = z.enum(["started", "escalated", "already_stopping", "already_stopped", "not_running"]);
export type StartOutcome = z.infer<typeof StartOutcome>;

export interface StartResult {
  next: SessionRecord;
  outcome: StartOutcome;
  effects: StopEffect[];
}

export function startStop(record: SessionRecord, req: StopRequest): StartResult {
  const same = { next: record, effects: [] };
  if (record.control === "stopped") return { ...same, outcome: "already_stopped" };
  if (record.control === "completed" || record.control === "orphaned") return { ...same, outcome: "not_running" };
  const current = record.control === "stopping" ? record.stop : null;
  if (current) {
    if (current.requestId === req.requestId || req.level <= current.nextLevel) return { ...same, outcome: "already_stopping" };
    const capAt = current.capAt === null ? null : Math.min(current.capAt, capOf(req));
    const stop = { ...current, nextLevel: req.level, deadlineAt: Math.min(current.deadlineAt, req.at + req.deadlineMs), capAt };
    return {
      next: { ...record, stop, updatedAt: Math.max(record.updatedAt, req.at) },
      outcome: "escalated",
      effects: [audit("stop_escalated", { requestId: req.requestId, from: current.nextLevel, to: req.level, by: req.by })],
    };
  }
  const stop = {
    requestId: req.requestId,
    requestedAt: req.at,
    reason: req.reason.slice(0, 500),
    requestedBy: req.by.slice(0, 100),
    nextLevel: req.level,
    delivered: [],
    deadlineAt: req.at + req.deadlineMs,
    quietMs: req.deadlineMs,
    capAt: capOf(req),
    abortAttempts: 0,
    parentNotified: false,
  };
  return {
    next: { ...record, control: "stopping", stop, updatedAt: Math.max(record.updatedAt, req.at) },
    outcome: "started",
    effects: [
      audit("session_stop_requested", { requestId: req.requestId, level: req.level, by: stop.requestedBy, origin: stopOrigin(stop), reason: stop.reason }),
    ],
  };
}

function capOf(req: StopRequest): number {
  return req.at + Math.max(req.maxWaitMs ?? req.deadlineMs, req.deadlineMs);
}

export type ToolResultAction = { kind: "none" } | { kind: "deliver"; level: StopLevel };
export interface ToolResultOutcome {
  next: SessionRecord;
  action: ToolResultAction;
  effects: StopEffect[];
}

/**
 * Called on every `tool.execute.after` of the session. Delivers the pending level and climbs: L1 → L2 → L3.
 * A request at L2 or L3 starts there. Delivering L3 stops the session (via {@link confirmStopped}, "ladder") and
 * asks for `abort_session` plus, once, `notify_parent`. A stopped or active session gets `none`.
 */
export function onToolResult(record: SessionRecord, at: number): ToolResultOutcome {
  const stop = record.stop;
  if (record.control !== "stopping" || stop === null) return { next: record, action: { kind: "none" }, effects: [] };
  const level = stop.nextLevel;
  const nextLevel: StopLevel = level === 1 ? 2 : 3;
  // The tool call is a sign of life, and the directive has now reached the session: the deadline counts from here.
  const told = { ...stop, nextLevel, delivered: [...stop.delivered, level] };
  const delivered = { ...record, stop: { ...told, deadlineAt: stopDeadline(told, at) }, updatedAt: Math.max(record.updatedAt, at) };
  const effects: StopEffect[] = [audit("stop_level_delivered", { requestId: stop.requestId, delivered: level })];
  if (level !== 3) return { next: delivered, action: { kind: "deliver", level }, effects };
  const final = confirmStopped(delivered, at, "ladder");
  return {
    next: final.next,
    action: { kind: "deliver", level },
    effects: [...effects, { type: "abort_session", delayMs: L3_GRACE_MS }, ...final.effects],
  };
}

export type ToolBeforeDecision = { block: false } | { block: true; reason: "session_stopped"; requestId: string | null; effects: StopEffect[] };

/**
 * `tool.execute.before`: a stopped session's further tool calls are refused (the adapter throws the L3 text) and
 * the session is aborted at once. A session still `stopping` is not blocked: its next result carries the pending level.
 */
export function onToolBefore(record: SessionRecord, tool: string): ToolBeforeDecision {
  if (record.control !== "stopped") return { block: false };
  const effects: StopEffect[] = [audit("tool_blocked", { tool, reason: "session_stopped" }), { type: "abort_session", delayMs: BLOCKED_CALL_ABORT_MS }];
  return { block: true, reason: "session_stopped", requestId: record.stop?.requestId ?? null, effects };
}

/** Abort attempts before giving up: the first abort and one retry. */
export const MAX_ABORT_ATTEMPTS = 2;

export type DeadlineAction = "abort" | "retry-abort" | "give-up" | "wait" | "none";
export interface DeadlineOutcome {
  next: SessionRecord;
  action: DeadlineAction;
  effects: StopEffect[];
}

/**
 * The hard stop. Due when `at ≥` the deadline (exactly at it counts), the deadline being `stopDeadline(stop, lifeAt)`:
 * with signs of life since it was set it may have moved, and the answer is `wait` with the record's new `deadlineAt`. First due call → `abort` (SDK
 * abort, then confirm idle and call {@link confirmStopped} with "hard-stop"); the next due call, `retryDeadlineMs`
 * later → `retry-abort`; the next → `give-up`, returned once: `abortAttempts` becomes `MAX_ABORT_ATTEMPTS + 1`,
 * the marker read by {@link gaveUp}, and the record stays `stopping` so a late compliance can still stop it.
 */
export function onDeadline(record: SessionRecord, at: number, opts: { retryDeadlineMs: number; lifeAt?: number | null }): DeadlineOutcome {
  const stop = record.stop;
  if (record.control !== "stopping" || stop === null || stop.abortAttempts > MAX_ABORT_ATTEMPTS) return { next: record, action: "none", effects: [] };
  // Signs of life since the deadline was set may have moved it (stop-deadline.ts): then `wait`, with the new one.
  const dueAt = stopDeadline(stop, opts.lifeAt);
  if (at < dueAt) {
    // Not due (a tool result moved it, or signs of life did): the adapter arms the timer again for `deadlineAt`.
    const next = dueAt === stop.deadlineAt ? record : { ...record, stop: { ...stop, deadlineAt: dueAt } };
    return { next, action: "wait", effects: [] };
  }
  const attempt = stop.abortAttempts + 1;
  const updatedAt = Math.max(record.updatedAt, at);
  if (attempt > MAX_ABORT_ATTEMPTS) {
    const next = { ...record, stop: { ...stop, abortAttempts: attempt }, updatedAt };
    const data = { requestId: stop.requestId, attempts: stop.abortAttempts, delivered: stop.delivered };
    const toast = {
      type: "toast",
      message: `Could not stop session ${record.sessionId}: it is still running after ${stop.abortAttempts} aborts.`,
      variant: "error",
    } as const;
    return { next, action: "give-up", effects: [audit("stop_failed", data), toast] };
  }
  // The parent is told before the abort: its foreground `task` returns "Task cancelled" at once, and its next step
  // should already know why. The record says `stopped` only after the adapter saw the child go idle.
  const told = tellParent({ ...record, stop: { ...stop, abortAttempts: attempt, deadlineAt: at + opts.retryDeadlineMs }, updatedAt }, "hard-stop");
  const effects: StopEffect[] = [audit("session_hard_stopped", { requestId: stop.requestId, attempt }), ...told.effects, { type: "abort_session", delayMs: 0 }];
  return { next: told.next, action: attempt === 1 ? "abort" : "retry-abort", effects };
}

export type AfterAbortAction = "none" | "abort-again";
export interface AfterAbortOutcome extends ConfirmResult {
  action: AfterAbortAction;
}

/**
 * The re-abort policy, after an SDK abort this process asked for (`abort_session`): if OpenCode reported the session
 * idle (`idle`), the stop is final ({@link confirmStopped}, "hard-stop"; idempotent, so an L3 stop already final stays as
 * it is). If it is still busy: a `stopped` session (L3, or a refused call) is aborted once more at once — nothing else
 * will; a `stopping` one waits for the ladder's retry deadline ({@link onDeadline}), so it is not aborted twice.
 */
export function afterAbort(record: SessionRecord, at: number, idle: boolean): AfterAbortOutcome {
  if (idle) return { ...confirmStopped(record, at, "hard-stop"), action: "none" };
  return { next: record, stoppedNow: false, effects: [], action: record.control === "stopped" ? "abort-again" : "none" };
}

/** True once {@link onDeadline} has given up on this stop request. */
export function gaveUp(record: SessionRecord): boolean {
  return record.stop !== null && record.stop.abortAttempts > MAX_ABORT_ATTEMPTS;
}

/**
 * `session.idle` while stopping: the session ended its turn, it complied — unless the turn ended because it was
 * aborted (the record is already `interrupted`: OpenCode reports idle after an abort, and the two events race), which
 * is an abort. Same contract as {@link confirmStopped}.
 */
export function onCompliance(record: SessionRecord, at: number): ConfirmResult {
  return confirmStopped(record, at, record.state === "interrupted" ? "hard-stop" : "compliance");
}
