import { type BudgetDirective, claimAll, peekAll, type StopDirective } from "../../governance/stop/directive-queue.ts";
import { removeQueueFolder } from "../../governance/stop/queue-sweep.ts";
import { triageStopRequests } from "../../governance/stop/stop-requests.ts";
import { confirmStopped, onCompliance, onDeadline, startStop, type StopHow } from "../../governance/stop/stop-ladder.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import { QueueWatcher } from "./queue-watcher.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import { PendingNotes } from "./pending-notes.ts";
import { BegunRequests } from "./begun-requests.ts";
import { ackCovered, drainStops } from "./stop-drain.ts";
import { drainGuidance } from "../sessions/descendants.ts";
import type { TimerHandle } from "../runtime/timers.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { DirectiveInbox } from "./directive-inbox.ts";

/**
 * Stop requests for sessions hosted by this process (seeds 000 and 001): notices them (queue watcher), begins each
 * request once, runs the hard-stop deadline, and makes a stop final when the session complies or is confirmed idle.
 * Every record change is a step of governance/stop/stop-ladder.ts; its effects (abort, notify the parent, audit)
 * are carried out by the effect runner. Its `inbox` (directive-inbox.ts) is what delivery on tool results looks at first.
 */
export class StopController {
  readonly #ctx: PluginContext;
  readonly #runner: EffectRunner;
  readonly #tracker: SessionTracker;
  readonly #watcher: QueueWatcher;
  readonly #deadlines = new Map<string, TimerHandle>();
  /** One look at a session's queue at a time (watch events, polls and this process's own requests overlap). */
  readonly #looking = new Map<string, Promise<void>>();
  /** Last sign of life (tool call, model step, streamed output) of each session with a deadline armed. In memory. */
  readonly #life = new Map<string, number>();
  /** The requests already begun, per session: each is begun once (begun-requests.ts). */
  readonly begun = new BegunRequests();
  /** Parent notifications shown on model steps that no tool result has carried yet. */
  readonly notes = new PendingNotes();
  /** Budget raises in a session's queue are handed here (plugin/budget/budget-raises.ts). */
  onBudgetRaise: ((sessionId: string, d: BudgetDirective) => Promise<void>) | undefined;

  readonly inbox: DirectiveInbox;

  constructor(runner: EffectRunner, tracker: SessionTracker) {
    this.#runner = runner;
    this.#ctx = runner.ctx;
    this.inbox = new DirectiveInbox(this.#ctx.paths.queues);
    this.#tracker = tracker;
    this.#watcher = new QueueWatcher({
      queuesDir: this.#ctx.paths.queues,
      onQueued: (id) => this.#onQueued(id),
      hosted: () => tracker.hosted(),
      hosts: (id) => tracker.hosts(id),
      timers: this.#ctx.timers,
      report: (where, e) => this.#ctx.reportHookError(where, e),
    });
  }

  start(): void {
    this.#watcher.start();
  }

  dispose(): void {
    this.#watcher.stop();
    for (const t of this.#deadlines.values()) this.#ctx.timers.clear(t);
    this.#deadlines.clear();
    this.#life.clear();
  }

  #onQueued(sessionId: string): Promise<void> {
    const p = (this.#looking.get(sessionId) ?? Promise.resolve()).catch(() => undefined).then(() => this.#look(sessionId));
    this.#looking.set(sessionId, p);
    void p.finally(() => this.#looking.get(sessionId) === p && this.#looking.delete(sessionId)).catch(() => undefined);
    return p;
  }

  /** A queue changed. Only sessions this process hosts are acted on; a stop starts its deadline right away. */
  async #look(sessionId: string): Promise<void> {
    if (!this.#tracker.hosts(sessionId)) return;
    this.inbox.mark(sessionId);
    const pending = await peekAll(this.#ctx.paths, sessionId);
    // A raise must reach a session that makes no tool call (stopped, idle): claimed here, not on a tool result.
    if (pending.some((d) => d.kind === "budget")) await this.#raises(sessionId);
    const stops = pending.flatMap((d) => (d.kind === "stop" ? [d] : []));
    await this.begin(sessionId, stops);
  }

  async #raises(sessionId: string): Promise<void> {
    const claimed = await claimAll(this.#ctx.paths, sessionId, { clock: this.#ctx.clock, kinds: ["budget"] });
    for (const d of claimed) if (d.kind === "budget") await this.onBudgetRaise?.(sessionId, d);
  }

  /**
   * Stop requests reached their session (a queue look, or claimed on a tool result): those that change something
   * (`triageStopRequests`) and still `stands` at their step make it `stopping`, with the hard-stop deadline scheduled.
   */
  async begin(sessionId: string, stops: readonly StopDirective[], stands: (r: SessionRecord) => boolean = () => true): Promise<void> {
    const { config, clock } = this.#ctx;
    const record = this.#runner.sessions.peek(sessionId);
    const fresh = record ? this.begun.note(sessionId, stops) : []; // the ladder decides nothing about a session it has no record of
    const triage = triageStopRequests(record, stops);
    if (triage.drain) return drainStops(this.#ctx, this.#runner.sessions.peek(sessionId), sessionId, triage.drain);
    await ackCovered(this.#ctx, sessionId, record, fresh, triage.begin);
    for (const d of triage.begin) {
      const req = {
        requestId: d.id,
        at: clock.now(),
        level: d.level,
        reason: d.reason,
        by: d.by,
        deadlineMs: config.stop.deadline,
        maxWaitMs: config.stop.maxWait,
      };
      const { next } = await this.#runner.step(sessionId, (r) => (r && stands(r) ? startStop(r, req) : { next: r, effects: [] }));
      if (next?.control === "stopping" && next.stop) this.#schedule(sessionId, next.stop.deadlineAt);
    }
  }

  #schedule(sessionId: string, at: number): void {
    this.#ctx.timers.clear(this.#deadlines.get(sessionId));
    const delay = Math.max(0, at - this.#ctx.clock.now());
    const run = () => this.#deadline(sessionId).catch((e) => this.#ctx.reportHookError("stop-deadline", e));
    this.#deadlines.set(sessionId, this.#ctx.timers.setTimeout(run, delay));
  }

  /** A sign of life (tool call, model step, streamed output), kept only while a deadline is armed (runs per chunk). */
  onLife(sessionId: string): void {
    if (this.#deadlines.has(sessionId)) this.#life.set(sessionId, this.#ctx.clock.now());
  }

  /**
   * The hard stop: the ladder's `onDeadline` asks for the abort (and tells the parent); retried once, then given up.
   * With signs of life since the deadline was set it may answer `wait`: armed again for the moved deadline.
   */
  async #deadline(sessionId: string): Promise<void> {
    this.#deadlines.delete(sessionId);
    const { config, clock } = this.#ctx;
    const at = clock.now();
    const opts = { retryDeadlineMs: config.stop.retryDeadline, lifeAt: this.#life.get(sessionId) ?? null };
    const { next, action } = await this.#runner.step(sessionId, (r) => (r ? onDeadline(r, at, opts) : { next: r, effects: [], action: "none" as const }));
    if (action === "wait" && next?.stop) {
      this.#schedule(sessionId, next.stop.deadlineAt);
      return;
    }
    this.#life.delete(sessionId);
    if ((action === "abort" || action === "retry-abort") && next?.stop) this.#schedule(sessionId, next.stop.deadlineAt);
  }

  /** The stop became final: the session complied (ended its turn) or was aborted. */
  async #final(sessionId: string, how: StopHow): Promise<void> {
    const at = this.#ctx.clock.now();
    await this.#runner.step(sessionId, (r) => (!r ? { next: r, effects: [] } : how === "compliance" ? onCompliance(r, at) : confirmStopped(r, at, how)));
    this.#settled(sessionId);
    await drainStops(this.#ctx, this.#runner.sessions.peek(sessionId), sessionId);
  }

  /** No stop runs for the session any more: no deadline, no sign of life kept, no request remembered. */
  #settled(sessionId: string): void {
    this.#ctx.timers.clear(this.#deadlines.get(sessionId));
    this.#deadlines.delete(sessionId);
    this.#life.delete(sessionId);
    this.begun.forget(sessionId);
  }

  /** A turn ended while a stop was pending: the session complied (it stopped making tool calls). */
  async onIdle(sessionId: string): Promise<void> {
    this.#runner.idle.onStatus(sessionId, "idle");
    if (this.#runner.sessions.peek(sessionId)?.control === "stopping") await this.#final(sessionId, "compliance");
  }

  async onAborted(sessionId: string): Promise<void> {
    this.#runner.idle.onStatus(sessionId, "idle");
    if (this.#runner.sessions.peek(sessionId)?.control === "stopping") await this.#final(sessionId, "hard-stop");
  }

  /** The session's work ended (failed, deleted): its queued directives are claimed and audited, nothing waits for it. */
  async onEnded(sessionId: string): Promise<void> {
    this.#settled(sessionId);
    await drainStops(this.#ctx, this.#runner.sessions.peek(sessionId), sessionId, "session ended");
    await drainGuidance(this.#ctx, sessionId, "session ended");
    await removeQueueFolder(this.#ctx.paths, sessionId);
  }

  /** A stop is under way here (its deadline is armed): the session must not be forgotten. */
  isStopping(sessionId: string): boolean {
    return this.#deadlines.has(sessionId) || this.#looking.has(sessionId);
  }

  forget(sessionId: string): void {
    this.#watcher.forget(sessionId);
    this.#life.delete(sessionId);
    this.begun.forget(sessionId);
    this.notes.set(sessionId, []);
  }

  sizes(): Record<string, number> {
    const { size: begunStops } = this.begun;
    return { deadlines: this.#deadlines.size, looking: this.#looking.size, watched: this.#watcher.size(), owedNotes: this.notes.size(), begunStops };
  }

  /** Sessions whose queues the watcher polls now (none while nothing is queued). */
  polled(): string[] {
    return this.#watcher.polled();
  }

  /** A request was just queued by this process (a governance tool): act on it without waiting for the watcher. */
  async poke(sessionId: string): Promise<void> {
    this.#watcher.track(sessionId);
    await this.#onQueued(sessionId);
  }
}
