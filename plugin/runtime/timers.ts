/**
 * Timers, injected like the clock so tests drive them instead of sleeping. Every timer the plugin starts is unref'd:
 * governance never keeps OpenCode's process alive.
 */
export type TimerHandle = { readonly id: unknown };

/** A timer's work. Async work returns its promise (already guarded: it must not reject), so a test can await it. */
export type TimerTask = () => undefined | Promise<unknown>;

export interface Timers {
  setTimeout(fn: TimerTask, ms: number): TimerHandle;
  setInterval(fn: TimerTask, ms: number): TimerHandle;
  clear(handle: TimerHandle | undefined): void;
}

export const systemTimers: Timers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { id: t };
  },
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref?.();
    return { id: t };
  },
  clear(handle) {
    if (handle) clearTimeout(handle.id as ReturnType<typeof setTimeout>);
  },
};

/** Waits `ms` on the given timers (a fake one in tests resolves when the test advances it). */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(() => void resolve(), ms));
}
