import { DONE } from "./contain.ts";

/**
 * Hook calls under way. OpenCode calls `dispose` and exits while an `event` hook it did not await (the last
 * `session.idle` of an `opencode run`) is still writing: dispose waits for those first, so the final state is on disk
 * and no lock is left behind.
 */
export class InFlight {
  readonly #running = new Set<Promise<unknown>>();

  /** Runs `fn` and remembers it until it settles. */
  track<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
    return (...args: A) => {
      const p = fn(...args);
      if (p === DONE) return p; // done at once: nothing under way
      this.#running.add(p);
      void p.then(
        () => this.#running.delete(p),
        () => this.#running.delete(p),
      );
      return p;
    };
  }

  get size(): number {
    return this.#running.size;
  }

  /**
   * Waits until nothing is under way (work started meanwhile is waited for too), or `timeoutMs` passed. True when
   * everything settled. A hook that hangs (a model request never answered) cannot hold the exit longer than that.
   */
  async settle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
        timer.unref?.();
      });
      await Promise.race([Promise.allSettled([...this.#running]), timeout]);
      clearTimeout(timer);
    }
    return true;
  }
}
