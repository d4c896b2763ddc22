import fs from "node:fs";
import path from "node:path";

const PENDING_FILE = /^\d{15}-.*\.json$/;

/**
 * Notices new directives without waiting for the target's next tool call: `fs.watch` on the queues folder (recursive
 * where the platform supports it) plus a poll of the sessions this process hosts, because watch events can be missed
 * (other processes, network file systems, a folder created after the watch started). Off the hot path.
 */
export class QueueWatcher {
  #watcher: fs.FSWatcher | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #busy = false;

  constructor(
    readonly queuesDir: string,
    readonly onQueued: (sessionId: string) => Promise<void>,
    readonly hosted: () => Iterable<string> = () => [],
    readonly pollMs = 500,
  ) {}

  start(): void {
    fs.mkdirSync(this.queuesDir, { recursive: true });
    try {
      this.#watcher = fs.watch(this.queuesDir, { recursive: true }, (_event, file) => {
        const id = file ? String(file).split(path.sep)[0] : undefined;
        if (id?.startsWith("ses_") && file && PENDING_FILE.test(path.basename(String(file)))) this.#fire(id);
      });
      this.#watcher.on("error", () => this.#watcher?.close());
      this.#watcher.unref?.();
    } catch {
      this.#watcher = undefined;
    }
    this.#timer = setInterval(() => void this.#poll(), this.pollMs);
    this.#timer.unref?.();
  }

  stop(): void {
    this.#watcher?.close();
    clearInterval(this.#timer);
  }

  #fire(id: string): void {
    void this.onQueued(id).catch(() => undefined);
  }

  async #poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (const id of this.hosted()) {
        let names: string[];
        try {
          names = await fs.promises.readdir(path.join(this.queuesDir, id));
        } catch {
          continue;
        }
        if (names.some((n) => PENDING_FILE.test(n))) this.#fire(id);
      }
    } finally {
      this.#busy = false;
    }
  }
}
