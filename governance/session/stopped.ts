import { type AbortSessionEffect, type AuditEffect, audit, type NotifyParentEffect, type ToastEffect } from "./effects.ts";
import type { NoticeHow, SessionRecord, StopHow } from "./session-record.ts";
import { stopOrigin } from "./stop-origin.ts";

/**
 * The one way a record becomes `stopped` (the stop ladder's L3, the hard stop, compliance, a process exit and a
 * session's end all come here), and the one place the parent is told: below the stop ladder so that the session's
 * own lifecycle (session-end.ts, process-exit.ts) can end a stop without importing stop/.
 */

export type StopEffect = AuditEffect | AbortSessionEffect | NotifyParentEffect | ToastEffect;

/**
 * What the parent is told really happened. An abort this process did not send (no abort attempt recorded: the
 * user pressed Escape, or another client aborted it) while the stop was pending is the user's, not a hard stop.
 */
function noticeOf(record: SessionRecord, how: StopHow): NoticeHow {
  return how === "hard-stop" && (record.stop?.abortAttempts ?? 0) === 0 ? "user-abort" : how;
}

/** `notify_parent` for a child whose parent was not told yet, and the record that says it now is. */
export function tellParent(record: SessionRecord, how: NoticeHow): { next: SessionRecord; effects: StopEffect[] } {
  if (record.parentId === null || record.stop === null || record.stop.parentNotified) return { next: record, effects: [] };
  return { next: { ...record, stop: { ...record.stop, parentNotified: true } }, effects: [{ type: "notify_parent", parentId: record.parentId, how }] };
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
  const stopped: SessionRecord = { ...record, control: "stopped", stoppedAt: at, updatedAt: Math.max(record.updatedAt, at) };
  const notice = noticeOf(record, how);
  const told = tellParent(stopped, notice);
  const effects: StopEffect[] = [
    audit("session_stopped", {
      how: notice === "user-abort" ? "user-abort" : how,
      origin: stopOrigin(record.stop),
      reason: record.stop?.reason ?? "",
      requestId: record.stop?.requestId ?? null,
      delivered: record.stop?.delivered ?? [],
    }),
    ...told.effects,
  ];
  return { next: told.next, stoppedNow: true, effects };
}
