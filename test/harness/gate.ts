/** A gate a scripted model waits on, so a test decides exactly when a session's next step (tool call) happens. */
export class Gate {
  #waiting: (() => void)[] = [];
  #credits = 0;

  wait(): Promise<void> {
    if (this.#credits > 0) {
      this.#credits--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** How many steps wait at the gate now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Lets `n` waiters through; a release with nobody waiting is kept for the next `wait`. */
  release(n = 1): void {
    for (let i = 0; i < n; i++) {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#credits++;
    }
  }

  /** Opens the gate for good (a test's end: no step waits any more). */
  releaseAll(): void {
    this.release(1000);
  }
}
