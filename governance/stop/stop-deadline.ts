import type { StopProgress } from "../session/session-record.ts";

/**
 * "Graceful means graceful" (issue 21 item 2): when the hard stop of a `stopping` session is due.
 *
 * - From the request, the session has `quietMs` (config `stop.deadline`) to react: a tool call (which delivers the
 *   next level) or the end of its turn (compliance).
 * - Once a stop directive has reached it (`delivered` is not empty), the deadline is counted from its last sign of
 *   life: a tool call, a model step, streamed output (`message.part.*` events). A session writing the summary it was
 *   asked for is not cut off mid-answer; one that goes quiet for `quietMs` is stuck and aborted.
 * - Before any directive reached it, output is the work being stopped, not progress toward stopping: a model stuck in
 *   an endless stream is aborted `quietMs` after the request, as before.
 * - Never later than `capAt` (request + config `stop.maxWait`), however lively; never moved once an abort was sent
 *   (`abortAttempts` > 0: the retry deadline is the ladder's own); never earlier than it already is.
 * Records from before this rule (`capAt` null) keep their fixed deadline.
 */
export function stopDeadline(stop: StopProgress, lifeAt: number | null | undefined): number {
  if (lifeAt == null || stop.capAt === null || stop.quietMs === null) return stop.deadlineAt;
  if (stop.abortAttempts > 0 || stop.delivered.length === 0) return stop.deadlineAt;
  return Math.max(stop.deadlineAt, Math.min(stop.capAt, lifeAt + stop.quietMs));
}
