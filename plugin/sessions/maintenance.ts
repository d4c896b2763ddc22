import { isRunningChild } from "../../governance/session/child-links.ts";
import { leftRunning, mayRun, orphanRunningLink, recoverCrashed } from "../../governance/session/crash-recovery.ts";
import { noteStale } from "../../governance/session/session-checks.ts";
import type { SessionHost, SessionRecord } from "../../governance/session/session-record.ts";
import { pruneArchive } from "../../governance/storage/archive-retention.ts";
import { sweepDeadLocks } from "../../governance/storage/file-lock.ts";
import { ownerIsGone } from "../../governance/storage/lock-owner.ts";
import { type QueueFate, sweepQueues } from "../../governance/stop/queue-sweep.ts";
import type { EffectRunner } from "./effect-runner.ts";
import type { TimerHandle } from "../runtime/timers.ts";
import { checkOrphans } from "./orphan-check.ts";
import type { SessionTracker } from "./session-tracker.ts";

/** How often the periodic sweep runs: well inside the 10-minute orphan window, so a crash is cleaned up within it. */
export const MAINTENANCE_MS = 60_000;
/**
 * A sweep that took `d` ms is not followed by another before `d × SWEEP_DUTY_FACTOR` ms: its background work stays
 * under 1/20 of one core even in a project with tens of thousands of records (10 000 records: a 2-6 s sweep, then
 * one every 40-120 s).
 */
export const SWEEP_DUTY_FACTOR = 20;

export type SweepReport = { archived: number; recovered: number; orphaned: number; locks: number; queues: number; pruned: number; forgotten: number };

/**
 * The periodic work of a process that may live for days (CONVENTIONS 14), one sweep at a time, at start and every
 * `MAINTENANCE_MS`:
 * 1. records idle > 48 h move to `archive/` (S5); archived records older than 30 days are deleted
 *    (storage/archive-retention.ts);
 * 2. records whose host process is gone (a crash) with a turn or a stop still under way are ended `orphaned` and their
 *    parent's link closed (session/crash-recovery.ts) — at once on this host, whatever process hosted them; an idle
 *    or interrupted one lost nothing and stays as it is (an ordinary exit released them anyway: process-exit.ts);
 * 3. running children of the sessions this process hosts get the 10-minute orphan check again (not only at start),
 *    and the sessions themselves the stale-state check (session-checks.ts `noteStale`: a turn with no activity for an
 *    hour is raised and audited here, since no event of the session comes to raise it);
 * 4. lock folders of dead holders, and queues of sessions that will never read them, are removed;
 * 5. sessions this process no longer needs to remember are forgotten (the caller's `forget`).
 * Cost: one read of each record under `sessions/` (archiving keeps that folder to the last 48 h) and a few
 * directory listings, off the hot path; it stops early when the process exits.
 */
export class Maintenance {
  readonly #runner: EffectRunner;
  readonly #tracker: SessionTracker;
  readonly #forget: (records: ReadonlyMap<string, SessionRecord>) => number;
  readonly #onEnded: (sessionId: string) => Promise<void>;
  readonly #forgetOne: (sessionId: string) => void;
  readonly #stats: () => Record<string, number>;
  readonly #isGone: (host: SessionHost) => Promise<boolean>;
  #timer: TimerHandle | undefined;
  #running: Promise<SweepReport | undefined> | undefined;
  #stopped = false;
  /** Not before this (clock ms): the duty-cycle bound. */
  #notBefore = 0;

  constructor(
    runner: EffectRunner,
    tracker: SessionTracker,
    hooks: {
      forget: (records: ReadonlyMap<string, SessionRecord>) => number;
      forgetOne: (sessionId: string) => void;
      onEnded: (sessionId: string) => Promise<void>;
      /** The instance's map sizes; written with each sweep when OPENCODE_GOVERNANCE_STATS=1 (the bench's long-lived run). */
      stats: () => Record<string, number>;
      /** Whether a record's host process is gone (default: storage/lock-owner.ts; the model-based test fakes processes). */
      isGone?: (host: SessionHost) => Promise<boolean>;
    },
  ) {
    this.#isGone = hooks.isGone ?? ownerIsGone;
    this.#stats = hooks.stats;
    this.#forgetOne = hooks.forgetOne;
    this.#runner = runner;
    this.#tracker = tracker;
    this.#forget = hooks.forget;
    this.#onEnded = hooks.onEnded;
  }

  /** The first sweep now (behind: OpenCode waits for start()), then one every `MAINTENANCE_MS`. */
  start(): void {
    void this.sweep();
    this.#timer = this.#runner.ctx.timers.setInterval(() => (this.#runner.ctx.clock.now() >= this.#notBefore ? this.sweep() : undefined), MAINTENANCE_MS);
  }

  stop(): void {
    this.#stopped = true;
    this.#runner.ctx.timers.clear(this.#timer);
  }

  /** The sweep under way, if any (exit waits for it; it stops early once stopped). */
  settled(): Promise<unknown> {
    return this.#running ?? Promise.resolve();
  }

  /** One sweep; a sweep still under way is not doubled. Never rejects (errors are reported). */
  sweep(): Promise<SweepReport | undefined> {
    if (this.#running) return this.#running;
    const began = performance.now();
    const p = this.#sweep().catch((error: unknown) => {
      this.#runner.ctx.reportHookError("maintenance", error);
      return undefined;
    });
    this.#running = p;
    void p.finally(() => {
      if (this.#running === p) this.#running = undefined;
      this.#notBefore = this.#runner.ctx.clock.now() + (performance.now() - began) * SWEEP_DUTY_FACTOR;
    });
    return p;
  }

  async #sweep(): Promise<SweepReport> {
    const { ctx } = this.#runner;
    const until = () => this.#stopped;
    const report: SweepReport = { archived: 0, recovered: 0, orphaned: 0, locks: 0, queues: 0, pruned: 0, forgotten: 0 };
    // A session the host reports busy is never archived, however long its turn (found by the model-based test).
    const archived = await ctx.store.archiveStale(ctx.config.resume.maxIdle, { until, keep: (id) => this.#tracker.isBusy(id) });
    report.archived = archived.length;
    for (const id of archived) this.#forgetOne(id);
    report.pruned = await pruneArchive(ctx.paths, ctx.clock.now(), undefined, until);
    const records = new Map<string, SessionRecord>();
    for (const r of await ctx.store.list()) records.set(r.sessionId, r);
    for (const r of records.values()) {
      if (until()) break;
      if (!leftRunning(r) || !r.hostedBy || !(await this.#isGone(r.hostedBy))) continue;
      const at = ctx.clock.now();
      const { next } = await this.#runner.step(r.sessionId, (c) => (c?.hostedBy && sameHost(c, r) ? recoverCrashed(c, at) : { next: c, effects: [] }));
      if (!next || mayRun(next)) continue;
      records.set(r.sessionId, next);
      report.recovered++;
      if (next.parentId) await this.#runner.step(next.parentId, (p) => orphanRunningLink(p, r.sessionId, at));
      await this.#onEnded(r.sessionId);
    }
    for (const id of [...this.#tracker.hosted()]) {
      if (until()) break;
      const parent = records.get(id);
      if (!parent?.children.some(isRunningChild)) continue;
      const notes = await checkOrphans(this.#runner, parent, (c) => this.#tracker.busyWithin(c, ctx.config.orphans.staleAfter));
      report.orphaned += notes.length;
      this.#tracker.addOrphanNotes(id, notes);
    }
    for (const id of [...this.#tracker.hosted()]) {
      const r = records.get(id);
      // A write only when a warning is raised or cleared: the step returns the record itself otherwise.
      if (!until() && r && noteStale(r, ctx.clock.now()).next !== r)
        await this.#runner.step(id, (c) => (c ? noteStale(c, ctx.clock.now()) : { next: c, effects: [] }));
    }
    report.locks = (await sweepDeadLocks(ctx.paths.sessions)) + (await sweepDeadLocks(ctx.paths.root));
    const dropped = await sweepQueues(ctx.paths, (id) => queueFate(records.get(id)), { clock: ctx.clock, until });
    report.queues = dropped.length;
    for (const d of dropped) {
      // Each directive nobody will read is audited with its id and why (issue 26: delivered once, or dropped and said so).
      const ids = (kind: string) => d.dropped.filter((x) => x.kind === kind).map((x) => x.id);
      const { sessionId, because } = d;
      const [stops, injects, notes, raises] = [ids("stop"), ids("inject"), ids("notify"), ids("budget")];
      if (stops.length + raises.length > 0)
        await ctx.record("stop_ignored", { sessionId, count: stops.length + raises.length, requestIds: [...stops, ...raises], because });
      if (injects.length > 0) await ctx.record("inject_dropped", { sessionId, count: injects.length, injectIds: injects, because });
      if (notes.length > 0) await ctx.record("note_dropped", { sessionId, count: notes.length, noteIds: notes, because });
    }
    report.forgotten = this.#forget(records);
    const stats =
      process.env.OPENCODE_GOVERNANCE_STATS === "1" ? { stats: this.#stats(), heapUsedMiB: Math.round(process.memoryUsage().heapUsed / 2 ** 20) } : {};
    if (report.archived + report.recovered + report.orphaned + report.locks + report.queues + report.pruned > 0 || "stats" in stats)
      await ctx.record("maintenance_swept", { ...report, ...stats });
    return report;
  }
}

/** The record still names the host that was found dead (a new process may have taken it meanwhile). */
function sameHost(current: SessionRecord, seen: SessionRecord): boolean {
  return current.hostedBy?.pid === seen.hostedBy?.pid && current.hostedBy?.start === seen.hostedBy?.start && current.hostedBy?.host === seen.hostedBy?.host;
}

/** Who may still read a session's queue (governance/stop/queue-sweep.ts): from its record in this sweep's snapshot. */
function queueFate(r: SessionRecord | undefined): QueueFate {
  if (!r) return { drop: "session archived or unknown" };
  if (mayRun(r)) return "runs";
  if (r.end?.how === "orphaned") return "resumable";
  if (r.control === "stopped") return { drop: "session stopped" };
  return { drop: `session ${r.end?.how ?? r.control}` };
}
