import * as z from "../zod.ts";
import { isRunningChild } from "./running.ts";
import { type ChildLink, type SessionRecord, SessionId, ToolCall } from "./session-record.ts";

/**
 * Orphan detection (seed 000): a child its parent still counts as running, that nobody is driving any more.
 * Pure: the caller passes the records it loaded, the time, and a busy probe (OpenCode `session.status`).
 */

export const Orphan = z.object({
  sessionId: SessionId,
  agent: z.string().nullable(),
  createdAt: z.number().int(),
  lastToolCall: ToolCall.nullable(),
  /** The instant staleness is measured from, and what it is. */
  since: z.number().int(),
  basis: z.enum(["last_tool_call", "created"]),
  staleForMs: z.number().int(),
});
export type Orphan = z.infer<typeof Orphan>;

export interface FindOrphansOptions {
  now: number;
  /** Config `orphans.staleAfter` (default 10 min). Strictly older than this is stale; exactly this is not. */
  staleMs: number;
  /** Whether OpenCode reports the session busy right now. A busy child is never an orphan. */
  isBusy: (sessionId: string) => boolean;
}

/**
 * A child is an orphan when all hold:
 * - its link says `running`, and its record (if any) has control `active` — a `stopping` child belongs to the stop
 *   ladder's deadline, and a stopped/completed one is not running; a record crash recovery already ended `orphaned`
 *   is one whatever its age (its link is what is left to close);
 * - its last tool call, or its creation when it made none, is more than `staleMs` before `now`
 *   (the record's timestamps first, the link's `createdAt` when there is no record);
 * - `isBusy` says it is not busy (a child thinking for a long time without tool calls is busy, not lost).
 * Returned in input order; nothing is changed — closing them is the caller's decision.
 */
export function findOrphans(children: readonly ChildLink[], childRecords: ReadonlyMap<string, SessionRecord>, opts: FindOrphansOptions): Orphan[] {
  const orphans: Orphan[] = [];
  for (const link of children) {
    if (!isRunningChild(link)) continue;
    const record = childRecords.get(link.sessionId);
    // Already ended `orphaned` by crash recovery (its host process is gone): only the parent's link is left to close.
    const recovered = record?.control === "orphaned";
    if (record && record.control !== "active" && !recovered) continue;
    const lastToolCall = record?.lastToolCall ?? null;
    const createdAt = record?.createdAt ?? link.createdAt;
    const since = lastToolCall ? lastToolCall.at : createdAt;
    const staleForMs = opts.now - since;
    if (!recovered && (staleForMs <= opts.staleMs || opts.isBusy(link.sessionId))) continue;
    orphans.push({
      sessionId: link.sessionId,
      agent: record?.agent ?? link.agent,
      createdAt,
      lastToolCall,
      since,
      basis: lastToolCall ? "last_tool_call" : "created",
      staleForMs,
    });
  }
  return orphans;
}

/**
 * Children closed as `orphaned` since `since` (the parent's last activity before this one): found by another process
 * or a start sweep while the parent was away (a crashed host, crash-recovery.ts). The parent is told of them when it
 * becomes active again, as of the orphans it finds itself.
 */
export function orphanedWhileAway(parent: SessionRecord, since: number): ChildLink[] {
  return parent.children.filter((c) => c.outcome === "orphaned" && c.closedAt !== null && c.closedAt >= since);
}
