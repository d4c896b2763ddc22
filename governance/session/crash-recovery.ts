import { isRunningChild, orphanChild } from "../delegation/child-links.ts";
import { audit, type Step } from "./effects.ts";
import { endSession } from "./session-end.ts";
import type { SessionHost, SessionRecord } from "./session-record.ts";

/**
 * Crash recovery (issue 21 item 5), as pure steps. A process that dies (kill -9, power loss) leaves its sessions
 * `active` or `stopping` with nobody to run them, their deadlines gone with it. The record names its host
 * (`hostedBy`); whoever finds that host dead ends the record `orphaned` — a stop in progress included: the work it
 * was meant to stop is over — so nothing is listed as running that no process runs. A session that runs again in
 * a new process (resumed) is taken by it and is active again.
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
 * The record's host process is gone (the caller checked: same host, pid dead or reused). A record that may still
 * run is ended `orphaned`, saying which process died; anything else is left as it is.
 */
export function recoverCrashed(record: SessionRecord | undefined, at: number): Step {
  if (!record || !mayRun(record)) return { next: record, effects: [] };
  const pid = record.hostedBy?.pid;
  return endSession(record, "orphaned", at, pid ? `host process ${pid} ended` : "host process ended");
}

/** The parent's side: its link to a child recovered from a crash is closed `orphaned`, if it was still running. */
export function orphanRunningLink(parent: SessionRecord | undefined, childId: string, at: number): Step {
  const link = parent?.children.find((c) => c.sessionId === childId);
  if (!parent || !link || !isRunningChild(link)) return { next: parent, effects: [] };
  return orphanChild(parent, childId, at);
}
