import type { Effect, Step } from "../../governance/session/effects.ts";
import { transition, type SessionEvent } from "../../governance/session/session-machine.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { checkStoredRecord, type TamperReason } from "../../governance/session/record-integrity.ts";
import { ownerIsGoneSync } from "../../governance/storage/lock-owner.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { TimerHandle } from "../runtime/timers.ts";
import { SoftChanges } from "./soft-changes.ts";

/** How long hot-path changes (model steps, tool calls) may wait in memory before they are written. */
export const WRITE_BEHIND_MS = 1_000;

/** A step's outcome as stored, with the record it started from. */
export type Applied<S extends Step = Step> = S & { previous: SessionRecord | undefined };

/**
 * The one place in plugin/ that writes records. Every change is a pure step of governance/ — a machine event
 * (`transition`) or a step function returning `{ next, effects }` — applied in one locked read-modify-write. Effects
 * are returned, not run (plugin/sessions/effect-runner.ts runs them).
 *
 * Hot-path events (`soft`: a model step, a tool call) only move counters, timestamps and the last tool call, so they
 * are applied in memory and written behind, batched with the next durable change or within `WRITE_BEHIND_MS`.
 * Losing a second of counters in a crash is the tradeoff for one durable write per session per second instead of
 * several per step (OpenCode awaits these hooks on every step).
 */
export class SessionRuntime {
  readonly #ctx: PluginContext;
  /** Soft changes not yet written, and the in-memory record they produced. */
  readonly #soft = new SoftChanges();
  readonly #timers = new Map<string, TimerHandle>();
  /**
   * The record as this process last wrote it, per session: a stored record that differs in the fields that limit and
   * stop the session was rewritten by someone else (governance/session/record-integrity.ts).
   */
  readonly #written = new Map<string, SessionRecord>();
  /** The step under way per session (a settled promise), so steps of one session run one after the other. */
  readonly #steps = new Map<string, Promise<undefined>>();
  /** Writes started by the write-behind timer, awaited by `flush`. */
  readonly #writing = new Set<Promise<unknown>>();

  /** A turn of this session is under way in this process (the tracker's busy status); set once by the runtime. */
  busyHere: (sessionId: string) => boolean = () => false;

  constructor(ctx: PluginContext) {
    this.#ctx = ctx;
  }

  #machine(sessionId: string) {
    const c = this.#ctx.config;
    return { sessionId, config: { minIdleMs: c.resume.minIdle, maxIdleMs: c.resume.maxIdle } };
  }

  /** The record as this process last saw it, pending soft events included (no I/O). */
  peek(sessionId: string): SessionRecord | undefined {
    // Its own last write last: a record someone made unreadable leaves the store's cache, not this process's copy.
    return this.#soft.view(sessionId) ?? this.#ctx.store.peek(sessionId) ?? this.#written.get(sessionId);
  }

  /**
   * A soft machine event applied now to the record this process holds, written behind; `undefined` when it holds none
   * (then `transition` reads and writes it). No waiting: every model step and tool call runs it (issue 31).
   */
  softTransition(sessionId: string, event: SessionEvent): Applied | undefined {
    return this.softStep(sessionId, (r) => {
      const result = transition(r, event, this.#machine(sessionId));
      return result.illegal || !result.next ? { next: r, effects: [] } : { next: result.next, effects: result.effects };
    });
  }

  /** One machine event. An illegal transition changes nothing and is reported as an `illegal_transition` effect. */
  async transition(sessionId: string, event: SessionEvent): Promise<Applied> {
    return this.step(sessionId, (current) => {
      const result = transition(current, event, this.#machine(sessionId));
      if (!result.illegal) return result;
      const effects: Effect[] = [{ type: "audit", event: "illegal_transition", data: { event: event.type, reason: result.illegal.reason } }];
      return { next: current, effects };
    });
  }

  /**
   * A hot-path step (a soft machine event, budget accounting, notices): applied to the in-memory record and written
   * behind. Only for steps that move counters, timestamps and escalation marks; a record this process has not seen is left
   * alone (`next` undefined). The step is replayed on the stored record at write time, so it must be a function of
   * the record alone.
   */
  softStep<S extends Step>(sessionId: string, fn: (current: SessionRecord) => S): (S & { previous: SessionRecord }) | undefined {
    const base = this.peek(sessionId);
    if (!base) return undefined;
    const result = fn(base);
    if (result.next && result.next !== base) {
      this.#soft.add(sessionId, base, result.next, (r) => (r ? (fn(r).next ?? r) : r));
      this.#scheduleFlush(sessionId);
    }
    return { ...result, previous: base };
  }

  /**
   * Applies a pure step in one locked read-modify-write; pending soft events are replayed first (their effects
   * already ran). A step returning `next: undefined` leaves the record as it is.
   */
  async step<S extends Step>(sessionId: string, fn: (current: SessionRecord | undefined) => S): Promise<Applied<S>> {
    // One step of a session at a time in this process: each one compares the stored record with what the step before
    // it wrote (`#written`), which must be known before the next one reads (the file lock alone orders the writes,
    // not the bookkeeping after them).
    const previous = this.#steps.get(sessionId);
    const run = (previous ? previous.then(() => this.#step(sessionId, fn)) : this.#step(sessionId, fn)) as Promise<Applied<S>>;
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#steps.set(sessionId, tail);
    try {
      return await run;
    } finally {
      if (this.#steps.get(sessionId) === tail) this.#steps.delete(sessionId);
    }
  }

  async #step<S extends Step>(sessionId: string, fn: (current: SessionRecord | undefined) => S): Promise<Applied<S>> {
    const activeHere = this.#soft.pendingFor(sessionId) || this.busyHere(sessionId);
    const pending = this.#soft.take(sessionId);
    this.#ctx.timers.clear(this.#timers.get(sessionId));
    this.#timers.delete(sessionId);
    let result: S | undefined;
    let previous: SessionRecord | undefined;
    let tampered: string[] = [];
    let why: TamperReason | undefined;
    const ours = this.#written.get(sessionId);
    const facts = { activeHere, hostGone: ownerIsGoneSync };
    let stored: SessionRecord | undefined;
    try {
      stored = await this.#ctx.store.update(
        sessionId,
        (current) => {
          let r = current;
          const checked = checkStoredRecord(r, ours, facts);
          if (checked) {
            tampered = checked.tampered;
            why = checked.reason;
            if (checked.moved) this.#written.delete(sessionId);
            r = checked.record;
          }
          r = pending(r);
          previous = r;
          result = fn(r);
          const next = result.next ?? r;
          // Readers see what is being written from now on, not the view from before this step (SoftChanges.writing).
          if (next) this.#soft.writing(sessionId, next);
          return next;
        },
        { hosted: ours !== undefined },
      );
      const done = result as S;
      // Only the sessions this process runs: another host's record (a crash recovery, an orphan check) is its own.
      if (stored?.hostedBy?.pid === process.pid) this.#written.set(sessionId, stored);
      else this.#written.delete(sessionId);
      // Reported, never trusted: use never goes down and the stop stands (the stored record was reconciled with ours).
      if (tampered.length > 0) await this.#ctx.record("record_tampered", { sessionId, fields: tampered.slice(0, 20), ...(why ? { reason: why } : {}) });
      return { ...done, next: stored, previous };
    } finally {
      this.#soft.settle(sessionId, stored);
    }
  }

  #scheduleFlush(sessionId: string): void {
    if (this.#timers.has(sessionId)) return;
    const timer = this.#ctx.timers.setTimeout(() => {
      this.#timers.delete(sessionId);
      const p = this.#write(sessionId).catch((e) => this.#ctx.reportHookError("write-behind", e));
      this.#writing.add(p);
      void p.finally(() => this.#writing.delete(p));
      return p;
    }, WRITE_BEHIND_MS);
    this.#timers.set(sessionId, timer);
  }

  /** Writes the pending soft events of one session (a step that changes nothing else). */
  #write(sessionId: string): Promise<Applied> {
    return this.step(sessionId, (current) => ({ next: current, effects: [] }));
  }

  /** Writes every pending soft event (OpenCode's `dispose`), and waits for writes already under way. */
  async flush(): Promise<void> {
    await Promise.allSettled(this.#soft.ids().map((id) => this.#write(id)));
    await this.settled();
  }

  /** Drops this process's copy of a session it no longer runs. */
  forget(sessionId: string): void {
    this.#written.delete(sessionId);
  }

  /** Soft events of this session wait to be written. */
  hasPending(sessionId: string): boolean {
    return this.#soft.has(sessionId);
  }

  sizes(): { pending: number; views: number; writeTimers: number; written: number } {
    return { ...this.#soft.sizes(), writeTimers: this.#timers.size, written: this.#written.size };
  }

  /** Waits for the writes the write-behind timer started. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#writing]);
  }
}
