import { isSessionId, type SessionHost, type SessionRecord } from "../../governance/session/session-record.ts";
import type { OrphanNote } from "../../governance/texts/status-note.ts";
import type { EffectRunner } from "./effect-runner.ts";
import { hostSession } from "../../governance/session/crash-recovery.ts";
import { ownerIsGone } from "../../governance/storage/lock-owner.ts";
import { orphanedWhileAway } from "../../governance/session/orphans.ts";
import { checkOrphans } from "./orphan-check.ts";
import { recoverIfCrashed, thisHost } from "./first-sight-recovery.ts";

/**
 * Which sessions this process hosts, and what OpenCode said about them: the first activity of a session decides
 * (through the machine's `first_seen`) between new, continued, resumed and expired; `session.status` says which
 * are busy; orphans found at a delegating session's start are kept for its status note.
 */
export class SessionTracker {
  readonly #runner: EffectRunner;
  readonly #first = new Map<string, Promise<SessionRecord | undefined>>();
  /** What each settled first activity answered: a session's later calls need not wait for it (issue 31). */
  readonly #settled = new Map<string, SessionRecord | undefined>();
  readonly #busy = new Map<string, string>();
  readonly #busyUntil = new Map<string, number>();
  readonly #orphans = new Map<string, OrphanNote[]>();
  /** Sessions whose last model step was a finished answer, until their next step or idle (decision 0052). */
  readonly #answered = new Set<string>();

  /** This process as a host (`hostedBy`), and the sweep's "certainly dead" test: injected by the model-based test. */
  constructor(
    runner: EffectRunner,
    readonly self: SessionHost = thisHost(),
    readonly isGone = ownerIsGone,
  ) {
    this.#runner = runner;
  }

  hosts(sessionId: string): boolean {
    return this.#first.has(sessionId);
  }

  hosted(): Iterable<string> {
    return this.#first.keys();
  }

  /**
   * Called on every activity of a session. The first time this process sees it, the record on disk (if any) decides
   * between a new session, a continuation, a resume (1 h–48 h idle or interrupted) and an expired one (> 48 h).
   * Concurrent first activities of one session share one promise.
   */
  ensureSeen(sessionId: string, agent?: string | null): Promise<SessionRecord | undefined> {
    if (!isSessionId(sessionId)) return Promise.resolve(undefined);
    const existing = this.#first.get(sessionId);
    if (existing) return existing;
    return this.#remember(sessionId, this.#firstActivity(sessionId, agent ?? null));
  }

  /** `ensureSeen`'s answer when it is already settled — no waiting; `seen: false` while a first activity is under way. */
  seenNow(sessionId: string): { seen: true; record: SessionRecord | undefined } | { seen: false } {
    return this.#settled.has(sessionId) ? { seen: true, record: this.#settled.get(sessionId) } : { seen: false };
  }

  #remember(sessionId: string, p: Promise<SessionRecord | undefined>): Promise<SessionRecord | undefined> {
    this.#first.set(sessionId, p);
    this.#settled.delete(sessionId);
    // Only the promise still current settles the session (a newer one replaced it: its own answer counts).
    void p.then(
      (record) => {
        if (this.#first.get(sessionId) === p) this.#settled.set(sessionId, record);
      },
      () => undefined,
    );
    return p;
  }

  /**
   * `session.created` arrived in this process. Registered synchronously, before any await, so a hook of the same
   * session that races the event (chat.message, transforms) waits for this record instead of synthesizing a resume.
   */
  created(sessionId: string, create: () => Promise<SessionRecord | undefined>): Promise<SessionRecord | undefined> {
    return this.#remember(
      sessionId,
      create().then((r) => this.host(sessionId, r)),
    );
  }

  async #firstActivity(sessionId: string, agent: string | null): Promise<SessionRecord | undefined> {
    const { ctx } = this.#runner;
    const onDisk = await recoverIfCrashed(this.#runner, await ctx.store.read(sessionId), this.self, this.isGone);
    let parent: { parentId: string | null; agent: string | null } | undefined;
    let parentRecord: SessionRecord | undefined;
    if (!onDisk) {
      parent = await ctx.api.parentOf(sessionId);
      if (parent?.parentId) parentRecord = await ctx.store.read(parent.parentId);
    }
    const first = await this.#runner.dispatch(sessionId, {
      type: "first_seen",
      at: ctx.clock.now(),
      agent: agent ?? parent?.agent ?? null,
      ...(parent ? { parentId: parent.parentId && isSessionId(parent.parentId) ? parent.parentId : null } : {}),
      ...(parentRecord ? { parentRecord: { depth: parentRecord.depth, rootId: parentRecord.rootId } } : {}),
      attest: ctx.trust.attest(sessionId),
      phase: ctx.config.phase,
    });
    const record = await this.host(sessionId, first);
    if (record && record.children.length > 0) {
      const notes = await checkOrphans(this.#runner, record, (id) => this.busyWithin(id, this.#runner.ctx.config.orphans.staleAfter));
      if (onDisk) notes.push(...(await this.#orphanedWhileAway(record, onDisk.lastActivityAt)));
      if (notes.length > 0) this.#orphans.set(sessionId, notes);
    }
    return record;
  }

  /** Notes for the children closed as orphaned while the parent was away (a sweep found their host process gone). */
  async #orphanedWhileAway(parent: SessionRecord, since: number): Promise<OrphanNote[]> {
    const now = this.#runner.ctx.clock.now();
    const notes: OrphanNote[] = [];
    for (const link of orphanedWhileAway(parent, since)) {
      const child = await this.#runner.ctx.store.read(link.sessionId);
      notes.push({ sessionId: link.sessionId, agent: link.agent, idleMs: Math.max(0, now - (child?.lastToolCall?.at ?? link.createdAt)) });
    }
    return notes;
  }

  /**
   * This process runs the session now: the record names it (`hostedBy`), so a crash of this process is recognised
   * by others at once; an orphaned record that runs again is active again (governance/session/crash-recovery.ts).
   */
  async host(sessionId: string, record: SessionRecord | undefined): Promise<SessionRecord | undefined> {
    if (!record) return record;
    const { ctx } = this.#runner;
    const at = ctx.clock.now();
    return (await this.#runner.step(sessionId, (r) => hostSession(r, this.self, at))).next;
  }

  /** The session's last model step was a finished answer (OpenCode's `message.updated`: completed, not tool calls). */
  noteAnswered(sessionId: string): void {
    if (this.#first.has(sessionId)) this.#answered.add(sessionId);
  }

  /** A new model step started: whatever it answered before, the turn goes on. */
  noteWorking(sessionId: string): void {
    this.#answered.delete(sessionId);
  }

  /** Still busy for OpenCode, but its answer is in: the turn is over, only OpenCode's idle has not come yet. */
  answered(sessionId: string): boolean {
    return this.#answered.has(sessionId);
  }

  /** `session.status`: busy/retry until idle. When it last stopped being busy is kept for the orphan check. */
  setStatus(sessionId: string, status: string): void {
    if (status === "idle") {
      this.#answered.delete(sessionId);
      if (this.#busy.delete(sessionId)) this.#busyUntil.set(sessionId, this.#runner.ctx.clock.now());
    } else this.#busy.set(sessionId, status);
  }

  /**
   * Busy now, or within the last `ms`: a child whose long turn just ended (its task result is on its way) is no orphan,
   * whatever its last tool call's age (a race of the sweep with a child's end, found by the model-based test).
   */
  busyWithin(sessionId: string, ms: number): boolean {
    if (this.#busy.has(sessionId)) return true;
    const until = this.#busyUntil.get(sessionId);
    return until !== undefined && this.#runner.ctx.clock.now() - until <= ms;
  }

  isBusy(sessionId: string): boolean {
    return this.#busy.has(sessionId);
  }

  /** Orphaned children found when this session started or resumed (or by the periodic check), for its status note. */
  orphanNotes(sessionId: string): readonly OrphanNote[] {
    return this.#orphans.get(sessionId) ?? [];
  }

  /** More orphans found by the periodic check (plugin/sessions/maintenance.ts). */
  addOrphanNotes(sessionId: string, notes: readonly OrphanNote[]): void {
    if (notes.length === 0) return;
    const known = this.#orphans.get(sessionId) ?? [];
    this.#orphans.set(sessionId, [...known, ...notes.filter((n) => !known.some((k) => k.sessionId === n.sessionId))]);
  }

  /**
   * The session's turn ended: orphan warnings it carried were shown for a whole turn and are history now (the
   * parent's links say `orphaned`); they leave its context.
   */
  turnEnded(sessionId: string): void {
    this.#orphans.delete(sessionId);
  }

  /** Forgets a session (ended, or idle long enough that its next activity is a first one again). */
  forget(sessionId: string): void {
    this.#answered.delete(sessionId);
    this.#first.delete(sessionId);
    this.#settled.delete(sessionId);
    this.#busy.delete(sessionId);
    this.#busyUntil.delete(sessionId);
    this.#orphans.delete(sessionId);
  }

  /** Sizes of what this tracker holds (the plugin's stats). */
  sizes(): { hosted: number; busy: number; orphanNotes: number } {
    return { hosted: this.#first.size, busy: this.#busy.size, orphanNotes: this.#orphans.size };
  }
}
