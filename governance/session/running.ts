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

/** One word for where a session stands, the same in the CLI, the tool and the dashboard. */
export type SessionStatus = "running" | "stopping" | "idle" | "interrupted" | "stopped" | "completed" | "failed" | "deleted" | "orphaned";

export function sessionStatus(r: SessionRecord): SessionStatus {
  if (r.end?.how === "deleted") return "deleted";
  if (r.control === "stopped") return "stopped";
  if (r.control === "orphaned" || r.end?.how === "orphaned") return "orphaned";
  if (r.end?.how === "failed") return "failed";
  if (r.control === "completed" || r.end) return "completed";
  if (r.state === "interrupted") return "interrupted";
  if (isIdle(r)) return "idle";
  return r.control === "stopping" ? "stopping" : "running";
}
