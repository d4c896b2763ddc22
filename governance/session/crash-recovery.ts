import { isRunningChild, orphanChild } from "./child-links.ts";
import { audit, type Step } from "./effects.ts";
import { isRunningSession } from "./running.ts";
import { endSession } from "./session-end.ts";
import type { SessionHost, SessionRecord } from "./session-record.ts";

/**
 * Crash recovery (issue 21 item 5, issue 26 item 1), as pure steps. A process that dies (kill -9, power loss) in the
 * middle of a turn leaves that session running, or a stop in progress, with nobody to run it and its deadlines gone.
 * The record names its host (`hostedBy`); whoever finds that host dead ends such a record `orphaned` — a stop in
 * progress included: the work it was meant to stop is over — so nothing is listed as running that no process runs.
 * A session with nothing running when its process went (idle between turns, interrupted by Escape) lost nothing: it
 * keeps its state and stays resumable; an ordinary exit releases `hostedBy` anyway (session/process-exit.ts). A
 * session that runs again in a new process (resumed) is taken by it and is active again.
 */

/** True when the record's work may still be running (not ended, not stopped). */
export function mayRun(record: SessionRecord): boolean {
  return record.control === "active" || record.control === "stopping";
}

/**
 * A process takes the session (its first activity here): `hostedBy` names it. A session ended as orphaned (its old
 * process died) that runs again is active again; ended by anything else, or stopped, it stays as it is.
 * Writes nothing when this process already hosts it.
 */
export function hostSession(record: SessionRecord | undefined, host: SessionHost, at: number): Step {
  if (!record) return { next: record, effects: [] };
  const same = record.hostedBy && record.hostedBy.host === host.host && record.hostedBy.pid === host.pid && record.hostedBy.start === host.start;
  const revive = record.control === "orphaned" && record.end?.how === "orphaned";
  if (same && !revive) return { next: record, effects: [] };
  if (!revive) return { next: { ...record, hostedBy: host }, effects: [] };
  const next: SessionRecord = { ...record, hostedBy: host, control: "active", end: null, updatedAt: Math.max(record.updatedAt, at) };
  return { next, effects: [audit("session_rehosted", { pid: host.pid, endedAt: record.end?.at ?? null })] };
}

/**
 * A root session whose turn (or a stop in it) its process's death cut off (issue 43): ended `orphaned` by the sweep,
 * and resumable like an interrupted one — `resume` and the dashboard list it as cut off by a crash, and its first
 * request in a new process (`opencode -s`/`-c`) gets the resume context, within the same window. A child so ended
 * stays ended: its parent's task call is gone with the dead process, and nobody but that call drove it.
 */
export function cutOffByCrash(record: SessionRecord): boolean {
  return record.parentId === null && record.control === "orphaned" && record.end?.how === "orphaned";
}

/**
 * What a dead host left behind that nobody runs now: a turn under way (running) or a stop in progress. An idle or
 * interrupted session's work was not cut off by the death of its process; it is not orphaned.
 */
export function leftRunning(record: SessionRecord): boolean {
  return !record.end && (record.control === "stopping" || (record.control === "active" && isRunningSession(record)));
}

/**
 * The record's host process is gone (the caller checked: same host, pid dead or reused). A record that was left
 * running ({@link leftRunning}) is ended `orphaned`, saying which process died; anything else is left as it is.
 */
export function recoverCrashed(record: SessionRecord | undefined, at: number): Step {
  if (!record || !leftRunning(record)) return { next: record, effects: [] };
  const pid = record.hostedBy?.pid;
  return endSession(record, "orphaned", at, pid ? `host process ${pid} ended` : "host process ended");
}

/** The parent's side: its link to a child recovered from a crash is closed `orphaned`, if it was still running. */
export function orphanRunningLink(parent: SessionRecord | undefined, childId: string, at: number): Step {
  const link = parent?.children.find((c) => c.sessionId === childId);
  if (!parent || !link || !isRunningChild(link)) return { next: parent, effects: [] };
  return orphanChild(parent, childId, at);
}

/** The detail the sweep writes when it ends a record whose host died (above; builds before issue 26 wrote the same). */
const HOST_ENDED = /^host process( \d+)? ended$/;

/**
 * A read rule for records ended by builds before issue 26, whose sweep ended every record of a process that was gone
 * — an ordinary exit included — as `orphaned`: a record so ended whose own state says nothing ran (idle between
 * turns, or interrupted by Escape, and no stop in progress) is read as it was before, active and resumable, hosted
 * by nobody. Applied on every load (storage reads through `migrateRecord`), idempotent; the next write keeps it.
 * A record orphaned while its turn or a stop was under way stays orphaned: that one a crash did cut off.
 */
export function readWronglyOrphaned(record: SessionRecord): SessionRecord {
  if (record.control !== "orphaned" || record.end?.how !== "orphaned" || !HOST_ENDED.test(record.end.detail ?? "")) return record;
  if (record.stop !== null) return record;
  const idle = record.idleAt !== null && record.idleAt >= record.lastActivityAt;
  if (!idle && record.state !== "interrupted") return record;
  return { ...record, control: "active", end: null, hostedBy: null };
}
