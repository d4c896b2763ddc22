import type { ChildLink, SessionRecord } from "./session-record.ts";

/**
 * What "running" means, written once (seed 000: "which sessions are running" decides what may be stopped, what is
 * listed, what an Escape cuts off and what can be orphaned). Two things can run: a session, and a child link.
 */

/**
 * The session's last recorded activity is the end of a turn (`session.idle`): nothing runs in it now. A root waits
 * for its user's next prompt; a child's task has returned. A new turn's first model step moves `lastActivityAt` past
 * `idleAt` (written within a second: the write-behind).
 */
export function isIdle(r: SessionRecord): boolean {
  return r.idleAt !== null && r.idleAt >= r.lastActivityAt;
}

/**
 * Something runs in the session now: it can be stopped or given guidance, an Escape cuts it off. Control `active` or
 * `stopping`, and not interrupted (Escape), idle (its turn ended) or ended.
 */
export function isRunningSession(r: SessionRecord): boolean {
  return (r.control === "active" || r.control === "stopping") && r.state !== "interrupted" && !isIdle(r) && !r.end;
}

/** A child link is running while it was never closed (the task did not return, nobody closed it as orphaned). */
export function isRunningChild(link: ChildLink): boolean {
  return link.outcome === "running";
}

/**
 * A session whose turn is under way while a subagent it started still runs: its turn waits on the `task` call (the
 * newcomer walk read `beginning/active` for this, issue 39). Counted as running; listed as waiting on its subagent.
 */
export function isWaitingOnSubagent(r: SessionRecord): boolean {
  return isRunningSession(r) && r.children.some(isRunningChild);
}

/** Where a session stands, as the `sessions` listing says it: the status word, or that its turn waits on a subagent. */
export function statusPhrase(r: SessionRecord, processGone = false): string {
  const status = sessionStatus(r, processGone);
  return status === "running" && isWaitingOnSubagent(r) ? "running, waiting on its subagent" : status;
}

/** One word for where a session stands, the same in the CLI, the tool and the dashboard. */
export type SessionStatus = "running" | "stopping" | "idle" | "interrupted" | "stopped" | "completed" | "failed" | "deleted" | "orphaned";

/**
 * The one function every surface takes its word from (`status`, `sessions`, `sessions --json`, `resume`, the
 * dashboard's rows and its resumable list, the `governance` tool). `processGone`: the caller looked and the record's
 * OpenCode process is dead (a crash or a kill; the next process to start marks it orphaned): a record still saying
 * running or stopping is then `orphaned` — "running" promises something busy now that can be stopped.
 */
export function sessionStatus(r: SessionRecord, processGone = false): SessionStatus {
  if (r.end?.how === "deleted") return "deleted";
  if (r.control === "stopped") return "stopped";
  if (r.control === "orphaned" || r.end?.how === "orphaned") return "orphaned";
  if (r.end?.how === "failed") return "failed";
  if (r.control === "completed" || r.end) return "completed";
  if (r.state === "interrupted") return "interrupted";
  if (isIdle(r)) return "idle";
  if (processGone) return "orphaned";
  return r.control === "stopping" ? "stopping" : "running";
}

/** The order status words are listed in: what needs attention first. */
const STATUS_ORDER: readonly SessionStatus[] = ["running", "stopping", "interrupted", "idle", "orphaned", "stopped", "failed", "completed", "deleted"];

/** Sessions by status word, for a headline (`status`): `running` only where a turn is under way in a live process. */
export type StatusCounts = { recorded: number; running: number; byStatus: Partial<Record<SessionStatus, number>> };

/**
 * Counts sessions by where they stand. A record can still say running after its process died (a crash, a kill: the
 * next process that starts marks it orphaned); `processGone` — decided by the caller, which can look at processes —
 * tells those apart, and they are counted `orphaned`, never `running`: "running" is a promise that something is busy
 * now and can be stopped.
 */
export function statusCounts(records: readonly SessionRecord[], processGone: (r: SessionRecord) => boolean): StatusCounts {
  const byStatus: Partial<Record<SessionStatus, number>> = {};
  for (const r of records) {
    const status = sessionStatus(r, processGone(r));
    byStatus[status] = (byStatus[status] ?? 0) + 1;
  }
  const ordered = Object.fromEntries(STATUS_ORDER.filter((s) => byStatus[s]).map((s) => [s, byStatus[s]])) as StatusCounts["byStatus"];
  return { recorded: records.length, running: (byStatus.running ?? 0) + (byStatus.stopping ?? 0), byStatus: ordered };
}

/** "0 running now; 11 recorded: 6 idle, 3 completed, 2 stopped" — the headline `status` prints. */
export function statusCountsLine(c: StatusCounts): string {
  const parts = Object.entries(c.byStatus).map(([status, n]) => `${n} ${status}`);
  return `${c.running} running now; ${c.recorded} recorded${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
}
