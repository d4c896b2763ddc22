import { z } from "zod";
import { AuditEffect, NotifyParentEffect } from "../session/session-machine.ts";
import { type SessionRecord, StopLevel } from "../session/session-record.ts";

/**
 * The stop ladder of seeds 000/001 as pure functions over a {@link SessionRecord}; no I/O, no clock.
 *
 * Soft path: every tool result of a `stopping` session delivers the next level — L1 (directive + original output),
 * L2 (directive only), L3 (terminated: control `stopped`, the session is aborted through the SDK, the parent is told).
 * Hard path: if no tool result comes before `stop.deadlineAt`, the adapter aborts through the SDK and checks the
 * session went idle; one retry; then it gives up loudly. Compliance: a turn that ends (idle) while stopping = stopped.
 *
 * Invariant: a session is stopped exactly once. Every path into `stopped` goes through {@link confirmStopped}, whose
 * `stoppedNow` is true for exactly one call, and only that call carries the `notify_parent` effect.
 */

/** The SDK abort (`client.session.abort`); the adapter then verifies the session is idle. */
export const AbortSessionEffect = z.object({ type: z.literal("abort_session") });
export const StopEffect = z.discriminatedUnion("type", [AuditEffect, AbortSessionEffect, NotifyParentEffect]);
export type StopEffect = z.infer<typeof StopEffect>;

/** How a stop became final: L3 delivered, SDK abort confirmed idle, or the session ended its turn itself. */
export const StopHow = z.enum(["ladder", "abort", "compliance"]);
export type StopHow = z.infer<typeof StopHow>;

export const StopRequest = z.object({
  requestId: z.string().min(1),
  at: z.number().int(),
  level: StopLevel,
  reason: z.string(),
  by: z.string(),
  /** Time the soft ladder gets before the hard stop (config `stop.deadline`, default 5 s). */
  deadlineMs: z.number().int().nonnegative(),
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
    const stop = { ...current, nextLevel: req.level, deadlineAt: Math.min(current.deadlineAt, req.at + req.deadlineMs) };
    return {
      next: { ...record, stop, updatedAt: Math.max(record.updatedAt, req.at) },
      outcome: "escalated",
      effects: [audit("session_stop_escalated", { requestId: req.requestId, from: current.nextLevel, to: req.level, by: req.by })],
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
    abortAttempts: 0,
  };
  return {
    next: { ...record, control: "stopping", stop, updatedAt: Math.max(record.updatedAt, req.at) },
    outcome: "started",
    effects: [audit("session_stop_requested", { requestId: req.requestId, level: req.level, by: stop.requestedBy, reason: stop.reason })],
  };
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
  const delivered = { ...record, stop: { ...stop, nextLevel, delivered: [...stop.delivered, level] }, updatedAt: Math.max(record.updatedAt, at) };
  const effects: StopEffect[] = [audit("session_stop_escalated", { requestId: stop.requestId, delivered: level })];
  if (level !== 3) return { next: delivered, action: { kind: "deliver", level }, effects };
  const final = confirmStopped(delivered, at, "ladder");
  return { next: final.next, action: { kind: "deliver", level }, effects: [...effects, { type: "abort_session" }, ...final.effects] };
}

export type ToolBeforeDecision = { block: false } | { block: true; reason: "session_stopped"; requestId: string | null };

/**
 * `tool.execute.before`: a stopped session's further tool calls are refused (the adapter throws the L3 text).
 * A session still `stopping` is not blocked: its next result carries the pending level.
 */
export function onToolBefore(record: SessionRecord): ToolBeforeDecision {
  if (record.control !== "stopped") return { block: false };
  return { block: true, reason: "session_stopped", requestId: record.stop?.requestId ?? null };
}

/** Abort attempts before giving up: the first abort and one retry. */
export const MAX_ABORT_ATTEMPTS = 2;

export type DeadlineAction = "abort" | "retry-abort" | "give-up" | "none";
export interface DeadlineOutcome {
  next: SessionRecord;
  action: DeadlineAction;
  effects: StopEffect[];
}

/**
 * The hard stop. Due when `at ≥ stop.deadlineAt` (exactly at the deadline counts). First due call → `abort` (SDK
 * abort, then confirm idle and call {@link confirmStopped} with "abort"); the next due call, `retryDeadlineMs`
 * later → `retry-abort`; the next → `give-up`, returned once: `abortAttempts` becomes `MAX_ABORT_ATTEMPTS + 1`,
 * the marker read by {@link gaveUp}, and the record stays `stopping` so a late compliance can still stop it.
 */
export function onDeadline(record: SessionRecord, at: number, opts: { retryDeadlineMs: number }): DeadlineOutcome {
  const stop = record.stop;
  const due = record.control === "stopping" && stop !== null && at >= stop.deadlineAt;
  if (!due || stop.abortAttempts > MAX_ABORT_ATTEMPTS) return { next: record, action: "none", effects: [] };
  const attempt = stop.abortAttempts + 1;
  const updatedAt = Math.max(record.updatedAt, at);
  if (attempt > MAX_ABORT_ATTEMPTS) {
    const next = { ...record, stop: { ...stop, abortAttempts: attempt }, updatedAt };
    const data = { requestId: stop.requestId, attempts: stop.abortAttempts, delivered: stop.delivered };
    return { next, action: "give-up", effects: [audit("stop_failed", data)] };
  }
  const next = { ...record, stop: { ...stop, abortAttempts: attempt, deadlineAt: at + opts.retryDeadlineMs }, updatedAt };
  const effects: StopEffect[] = [{ type: "abort_session" }, audit("session_hard_stopped", { requestId: stop.requestId, attempt })];
  return { next, action: attempt === 1 ? "abort" : "retry-abort", effects };
}

/** True once {@link onDeadline} has given up on this stop request. */
export function gaveUp(record: SessionRecord): boolean {
  return record.stop !== null && record.stop.abortAttempts > MAX_ABORT_ATTEMPTS;
}

export interface ConfirmResult {
  next: SessionRecord;
  /** True for exactly one call per stop: the one that moved `stopping` → `stopped`. */
  stoppedNow: boolean;
  effects: StopEffect[];
}

/**
 * Makes a `stopping` session `stopped` (stoppedAt = `at`). Idempotent: on a stopped record it changes nothing and
 * returns `stoppedNow: false`; on a record nobody asked to stop (active, completed, orphaned) likewise — only a
 * stop request can stop a session. The stopping call emits `session_stopped` and, for a child, `notify_parent`.
 */
export function confirmStopped(record: SessionRecord, at: number, how: StopHow): ConfirmResult {
  if (record.control !== "stopping") return { next: record, stoppedNow: false, effects: [] };
  const next: SessionRecord = { ...record, control: "stopped", stoppedAt: at, updatedAt: Math.max(record.updatedAt, at) };
  const effects: StopEffect[] = [
    audit("session_stopped", { how, requestId: record.stop?.requestId ?? null, delivered: record.stop?.delivered ?? [] }),
  ];
  if (record.parentId !== null) effects.push({ type: "notify_parent", parentId: record.parentId, reason: "child_stopped" });
  return { next, stoppedNow: true, effects };
}

/** `session.idle` while stopping: the session ended its turn, it complied. Same contract as {@link confirmStopped}. */
export function onCompliance(record: SessionRecord, at: number): ConfirmResult {
  return confirmStopped(record, at, "compliance");
}

function audit(event: string, data: Record<string, unknown>): StopEffect {
  return { type: "audit", event, data };
}
