import type { PluginContext } from "../runtime/context.ts";
import { sleep } from "../runtime/timers.ts";

/** How often OpenCode's status route is asked while waiting for a session to go idle. */
const IDLE_POLL_MS = 150;

/**
 * Whether OpenCode reports a session idle: `session.status` events wake the waiters at once, the status route is
 * the check (events can be missed). Used after an SDK abort, before a stop is recorded as final.
 */
export class IdleWatch {
  readonly #ctx: PluginContext;
  readonly #waiters = new Map<string, (() => void)[]>();

  constructor(ctx: PluginContext) {
    this.#ctx = ctx;
  }

  /** A `session.status` event (or the idle/aborted event that implies it). */
  onStatus(sessionId: string, status: string): void {
    if (status !== "idle") return;
    for (const wake of this.#waiters.get(sessionId) ?? []) wake();
    this.#waiters.delete(sessionId);
  }

  forget(sessionId: string): void {
    this.#waiters.delete(sessionId);
  }

  size(): number {
    return this.#waiters.size;
  }

  /** Resolves true once OpenCode reports the session idle, false after `timeoutMs`. */
  async confirmIdle(sessionId: string, timeoutMs: number): Promise<boolean> {
    const { clock, api, timers } = this.#ctx;
    const until = clock.now() + timeoutMs;
    while (clock.now() < until) {
      const status = await api.status();
      if (status && !status[sessionId]) return true;
      await new Promise<void>((resolve) => {
        const list = this.#waiters.get(sessionId) ?? [];
        list.push(resolve);
        this.#waiters.set(sessionId, list);
        void sleep(timers, IDLE_POLL_MS).then(resolve);
      });
    }
    // Timed out: this wait's wake-ups are not needed any more.
    this.#waiters.delete(sessionId);
    return false;
  }
}
