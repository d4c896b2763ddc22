import fs from "node:fs";
import path from "node:path";
import type { Timers, TimerHandle } from "../runtime/timers.ts";

const PENDING_FILE = /^\d{15}-.*\.json$/;
const SESSION_DIR = /^ses_[A-Za-z0-9]+$/;
/** Empty polls before a session's queue is no longer polled (a directive may land just after its folder). */
const EMPTY_POLLS_BEFORE_REST = 4;

export type QueueWatcherOptions = {
  queuesDir: string;
  onQueued: (sessionId: string) => Promise<void>;
  /** Sessions this process hosts: polled only when the folder watch is unavailable. */
  hosted: () => Iterable<string>;
  hosts: (sessionId: string) => boolean;
  timers: Timers;
  report: (where: string, error: unknown) => void;
  pollMs?: number;
};

/**
 * Notices new directives without waiting for the target's next tool call. `fs.watch` on the queues folder names the
 * session whose queue changed; only such sessions are polled (watch events can be missed or come before the file),
 * until their queue is empty. With nothing queued, nothing is polled. Without a working watch, every hosted session
 * is polled. Errors are reported like every other timer's.
 */
export class QueueWatcher {
  readonly #o: Required<QueueWatcherOptions>;
  #watcher: fs.FSWatcher | undefined;
  #timer: TimerHandle | undefined;
  #busy = false;
  /** Sessions with something queued (or just touched), and how many empty polls they may still get. */
  readonly #active = new Map<string, number>();
  /** Sessions with directives queued that another process hosts; polled again only once this one hosts them. */
  readonly #foreign = new Set<string>();

  constructor(options: QueueWatcherOptions) {
    this.#o = { pollMs: 500, ...options };
  }

  start(): void {
    fs.mkdirSync(this.#o.queuesDir, { recursive: true });
    try {
      this.#watcher = fs.watch(this.#o.queuesDir, { recursive: true }, (_event, file) => {
        const id = file ? String(file).split(/[\\/]/)[0] : undefined;
        if (id && SESSION_DIR.test(id)) this.noticed(id);
      });
      this.#watcher.on("error", (e) => {
        this.#o.report("queue-watch", e);
        this.#watcher?.close();
        this.#watcher = undefined;
      });
      this.#watcher.unref?.();
    } catch (e) {
      this.#o.report("queue-watch", e);
      this.#watcher = undefined;
    }
    this.#timer = this.#o.timers.setInterval(() => this.poll(), this.#o.pollMs);
    // Directives queued while no process watched (e.g. OpenCode restarted) are found once, here.
    for (const id of fs.readdirSync(this.#o.queuesDir)) if (SESSION_DIR.test(id)) this.noticed(id);
  }

  stop(): void {
    this.#watcher?.close();
    this.#o.timers.clear(this.#timer);
  }

  /** A session's queue changed (a watch event): look now and keep looking. */
  noticed(sessionId: string): void {
    this.track(sessionId);
    void this.#check(sessionId);
  }

  /** Poll this session's queue until it is empty (this process queued something itself and looks now). */
  track(sessionId: string): void {
    this.#active.set(sessionId, EMPTY_POLLS_BEFORE_REST);
  }

  forget(sessionId: string): void {
    this.#active.delete(sessionId);
    this.#foreign.delete(sessionId);
  }

  size(): number {
    return this.#active.size + this.#foreign.size;
  }

  /** Sessions polled now (none when nothing is queued and the watch works). */
  polled(): string[] {
    if (!this.#watcher) return [...this.#o.hosted()];
    return [...this.#active.keys(), ...[...this.#foreign].filter((id) => this.#o.hosts(id))];
  }

  async poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (const id of this.polled()) await this.#check(id);
    } catch (e) {
      this.#o.report("queue-poll", e);
    } finally {
      this.#busy = false;
    }
  }

  async #check(id: string): Promise<void> {
    let names: string[] = [];
    try {
      names = await fs.promises.readdir(path.join(this.#o.queuesDir, id));
    } catch {
      // No queue folder yet.
    }
    this.#foreign.delete(id);
    if (names.some((n) => PENDING_FILE.test(n))) {
      if (!this.#o.hosts(id)) {
        this.#active.delete(id);
        this.#foreign.add(id);
        return;
      }
      this.#active.set(id, EMPTY_POLLS_BEFORE_REST);
      await this.#o.onQueued(id).catch((e) => this.#o.report("queue-watcher", e));
      return;
    }
    const left = (this.#active.get(id) ?? 0) - 1;
    if (left > 0) this.#active.set(id, left);
    else this.#active.delete(id);
  }
}
