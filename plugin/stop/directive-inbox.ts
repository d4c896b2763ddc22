import fs from "node:fs";
import path from "node:path";

/**
 * Which hosted sessions may have directives queued, so a tool result of a session with nothing queued costs one
 * `lstat` and no directory read. Two signals: marks (the queue watcher and this process's own requests), and the
 * session's queue folder having changed since its queue was last claimed — a directive is renamed into that folder,
 * which moves its mtime. The second makes delivery on the next tool call independent of `fs.watch`, whose events
 * can be missed (a folder created and written at once, a busy machine, a host whose recursive watch misses new
 * sub-folders); the watcher only makes it sooner.
 */
/** How old a queue folder's mtime must be before a claim counts it as seen (far above any file-time granularity). */
const SETTLED_MS = 50;

export class DirectiveInbox {
  readonly #queuesDir: string;
  readonly #now: () => number;
  readonly #marked = new Set<string>();
  /** The queue folder's mtime when its queue was last claimed, per session. */
  readonly #claimedAt = new Map<string, number>();

  /** `now` is wall-clock epoch ms, the clock file times use (not an injected governance clock). */
  constructor(queuesDir: string, now: () => number = Date.now) {
    this.#queuesDir = queuesDir;
    this.#now = now;
  }

  forget(sessionId: string): void {
    this.#marked.delete(sessionId);
    this.#claimedAt.delete(sessionId);
  }

  size(): number {
    return this.#marked.size + this.#claimedAt.size;
  }

  mark(sessionId: string): void {
    this.#marked.add(sessionId);
  }

  has(sessionId: string): boolean {
    return this.#marked.has(sessionId) || this.#changed(sessionId) !== undefined;
  }

  /**
   * True if the session was marked or its queue folder changed; either way it is cleared (the caller claims the
   * queue now; a directive renamed in during that claim moves the mtime again and is seen next time).
   */
  take(sessionId: string): boolean {
    const changed = this.#changed(sessionId);
    // File times tick coarsely (a jiffy): a directive renamed in within the same tick as this claim would leave the
    // mtime unchanged. A change that recent is not recorded as claimed, so the next tool result looks once more.
    if (changed !== undefined && this.#now() - changed > SETTLED_MS) this.#claimedAt.set(sessionId, changed);
    return this.#marked.delete(sessionId) || changed !== undefined;
  }

  /** The folder's mtime when it differs from the one last claimed; undefined when unchanged or absent. */
  #changed(sessionId: string): number | undefined {
    let mtime: number | undefined;
    try {
      mtime = fs.lstatSync(path.join(this.#queuesDir, sessionId), { throwIfNoEntry: false })?.mtimeMs;
    } catch {
      return undefined;
    }
    return mtime === undefined || mtime === this.#claimedAt.get(sessionId) ? undefined : mtime;
  }
}
