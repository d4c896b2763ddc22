import type { SessionRecord } from "../../governance/session/session-record.ts";

/** One queued soft change, replayed on the stored record when it is written. */
export type Replay = (r: SessionRecord | undefined) => SessionRecord | undefined;

/**
 * Soft changes not yet written (plugin/sessions/session-runtime.ts), per session: in order, each a pure replay of one
 * event or step; the record the first was applied to; and the in-memory record ("view") they produced.
 */
export class SoftChanges {
  readonly #pending = new Map<string, { base: SessionRecord; replays: Replay[] }>();
  readonly #views = new Map<string, SessionRecord>();

  view(sessionId: string): SessionRecord | undefined {
    return this.#views.get(sessionId);
  }

  /** A change applied to `base` (the record as this process saw it), giving `view`. */
  add(sessionId: string, base: SessionRecord, view: SessionRecord, replay: Replay): void {
    this.#views.set(sessionId, view);
    const pending = this.#pending.get(sessionId);
    if (pending) pending.replays.push(replay);
    else this.#pending.set(sessionId, { base, replays: [replay] });
  }

  /**
   * The changes to write now, taken out of the queue, as a function of the stored record. Soft steps are pure: on the
   * very record they were first applied to (nobody wrote the file since: the store hands back its own copy), they give
   * the view again, which is taken as it is (issue 31: a second application of every change was half their cost).
   */
  take(sessionId: string): (stored: SessionRecord | undefined) => SessionRecord | undefined {
    const pending = this.#pending.get(sessionId);
    this.#pending.delete(sessionId);
    const view = this.#views.get(sessionId);
    if (!pending) return (r) => r;
    return (stored) => {
      if (view && stored === pending.base) return view;
      let r = stored;
      for (const replay of pending.replays) r = replay(r);
      return r;
    };
  }

  /**
   * A durable write of `record` has begun (its step decided it; the file is not written yet). From now on readers see
   * it, with any change queued since the write took the earlier ones rebuilt on it — not the view from before, which
   * lacks what the write changes: a stop written while a tool result was being handled read `active` there, and the
   * result carried no stop directive although the file already said `stopping`.
   */
  writing(sessionId: string, record: SessionRecord): void {
    this.settle(sessionId, record);
    if (!this.#views.has(sessionId)) this.#views.set(sessionId, record);
  }

  /**
   * After a write: changes queued while it was under way are not written yet, so the view must keep them — rebuilt on
   * what was stored — or a reader would see the stored record without them (a budget warning already given would be
   * given again: issue 28 §1). No such change: the view goes and the store's record is current.
   */
  settle(sessionId: string, stored: SessionRecord | undefined): void {
    const newer = this.#pending.get(sessionId);
    if (!newer) return void this.#views.delete(sessionId);
    if (!stored) return;
    let r: SessionRecord | undefined = stored;
    for (const replay of newer.replays) r = replay(r);
    if (r) this.#views.set(sessionId, r);
    newer.base = stored;
  }

  /** Changes of this session wait to be written: it is running in this process. */
  pendingFor(sessionId: string): boolean {
    return this.#pending.has(sessionId);
  }

  has(sessionId: string): boolean {
    return this.#pending.has(sessionId) || this.#views.has(sessionId);
  }

  ids(): string[] {
    return [...this.#pending.keys()];
  }

  sizes(): { pending: number; views: number } {
    return { pending: this.#pending.size, views: this.#views.size };
  }
}
