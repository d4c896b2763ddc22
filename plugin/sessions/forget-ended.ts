import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { SessionRuntime } from "./session-runtime.ts";
import type { SessionTracker } from "./session-tracker.ts";

/** The parts of the plugin instance this needs (structural: no import of runtime.ts, which imports this file). */
type Parts = {
  ctx: PluginContext;
  tracker: SessionTracker;
  sessions: SessionRuntime;
  stops: { isStopping(sessionId: string): boolean };
  forget(sessionId: string): void;
};

/**
 * Forgets what this process holds about sessions it no longer runs, so memory does not grow with the number of
 * sessions a process has hosted: a session whose work ended (archived and deleted ones are forgotten at once), or one
 * idle for longer than the resume window's lower bound (its next activity is then a first one again, which
 * applies the 1 h / 48 h rules). Never a busy session, one being stopped, or one with writes pending.
 * A forgotten session keeps `hostedBy` until another process takes it: nothing runs in it, so a later sweep never
 * orphans it (governance/session/crash-recovery.ts `leftRunning`).
 */
export function forgetEnded(rt: Parts, records: ReadonlyMap<string, SessionRecord>): number {
  const now = rt.ctx.clock.now();
  const idleFor = rt.ctx.config.resume.minIdle;
  let forgotten = 0;
  for (const id of [...rt.tracker.hosted()]) {
    if (rt.tracker.isBusy(id) || rt.sessions.hasPending(id) || rt.stops.isStopping(id)) continue;
    const r = records.get(id);
    // No record in the sweep's snapshot: archived (forgotten by the sweep), or created after the snapshot (kept).
    if (!r) continue;
    const ended = r.control === "completed" || r.control === "orphaned" || r.control === "stopped";
    if (!ended && now - Math.max(r.lastActivityAt, r.updatedAt) < idleFor) continue;
    rt.forget(id);
    forgotten++;
  }
  return forgotten;
}
