import type { SessionRecord } from "../session/session-record.ts";
import { isIdle } from "../session/running.ts";
import type { StopDirective } from "./directive-queue.ts";

/** Why queued stop requests are claimed without acting on them (audited `stop_ignored`). */
export type StopDrainReason = "already stopped" | "not running" | "session ended";

export interface StopTriage {
  /** Requests that change something now (`startStop` will answer `started` or `escalated`), in queue order. */
  begin: StopDirective[];
  /** Set when the requests are done with and should be claimed and audited rather than left in the queue. */
  drain: StopDrainReason | null;
}

/**
 * Which queued stop requests a hosting process acts on — the idempotence of stop requests. The queue is looked at on
 * every watch event and poll until a tool result claims it, so the same request is seen many times: it is begun once
 * (the record names the request it is acting on) and a request that asks for no more than what is pending changes
 * nothing. A stopped session's requests are drained ("already stopped"); a finished one's (`completed`, `orphaned`)
 * too ("not running"), and an active one whose turn has ended (idle), so its queue file does not stay behind and an
 * idle session is never hard-stopped. An unknown session (no record) is left alone.
 */
export function triageStopRequests(record: SessionRecord | undefined, stops: readonly StopDirective[]): StopTriage {
  if (!record || stops.length === 0) return { begin: [], drain: null };
  if (record.control === "stopped") return { begin: [], drain: "already stopped" };
  if (record.control === "completed" || record.control === "orphaned") return { begin: [], drain: "not running" };
  // Its turn had ended before the request came (a child whose task just returned, a root waiting for its user):
  // nothing to stop, nothing to abort, and no parent to tell about a stop that did not happen.
  if (record.control === "active" && isIdle(record)) return { begin: [], drain: "not running" };
  const pending = record.control === "stopping" ? record.stop : null;
  let level = pending?.nextLevel ?? 0;
  const begin: StopDirective[] = [];
  for (const s of stops) {
    if (s.id === pending?.requestId || s.level <= level) continue;
    begin.push(s);
    level = Math.max(level, s.level);
  }
  return { begin, drain: null };
}

/**
 * Of the stop requests claimed from a stopped or finished session's queue, those it did not act on (audited
 * `stop_ignored`). The request the record's stop was for is done, not ignored: its end is audited `session_stopped`,
 * and a hard stop ends a session before any tool result has claimed that request.
 */
export function ignoredStops<T extends { id: string }>(record: SessionRecord | undefined, drained: readonly T[]): T[] {
  const actedOn = record?.stop?.requestId;
  return drained.filter((d) => d.id !== actedOn);
}
