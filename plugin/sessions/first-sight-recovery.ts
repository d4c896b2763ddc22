import { leftRunning, mayRun, orphanRunningLink, recoverCrashed } from "../../governance/session/crash-recovery.ts";
import type { SessionHost, SessionRecord } from "../../governance/session/session-record.ts";
import { thisProcess } from "../../governance/storage/lock-owner.ts";
import type { EffectRunner } from "./effect-runner.ts";

/** This process as a session host (the same identity as its locks). */
export function thisHost(): SessionHost {
  const { host, pid, start } = thisProcess();
  return { host, pid, start };
}

/**
 * A record whose process died with its turn (or a stop) under way is ended `orphaned` when a process first sees it,
 * before the window classifies it, as the maintenance sweep would: the sweep may not have reached it yet. OpenCode 2
 * loads a location's plugins on the very prompt that continues the session (2.0.15 after a kill -9), so without this
 * the first step read the record as merely idle a moment ago, the resume context never came, and this process then
 * took the record (docs/decisions/0057-crash-recovery-on-first-activity.md). `isGone` is the sweep's own test.
 */
export async function recoverIfCrashed(
  runner: EffectRunner,
  record: SessionRecord | undefined,
  self: SessionHost,
  isGone: (host: SessionHost) => Promise<boolean>,
): Promise<SessionRecord | undefined> {
  const host = record?.hostedBy;
  if (!record || !host || !leftRunning(record) || sameProcess(host, self) || !(await isGone(host))) return record;
  const at = runner.ctx.clock.now();
  const { next } = await runner.step(record.sessionId, (c) =>
    c?.hostedBy && sameProcess(c.hostedBy, host) ? recoverCrashed(c, at) : { next: c, effects: [] },
  );
  if (next && !mayRun(next) && next.parentId) await runner.step(next.parentId, (p) => orphanRunningLink(p, record.sessionId, at));
  return next;
}

function sameProcess(a: SessionHost, b: SessionHost): boolean {
  return a.host === b.host && a.pid === b.pid && a.start === b.start;
}
