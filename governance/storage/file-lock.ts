import { resolve } from "node:path";
import lockfile, { type LockOptions } from "proper-lockfile";

export interface FileLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long is taken over. Default 10 s (proper-lockfile's minimum
   * is 2 s). Lower means a killed process blocks others for less time; higher tolerates longer event-loop stalls.
   */
  staleMs?: number;
  /** Give up (throw `ELOCKED`) after waiting about this long. Default 25 s: longer than `staleMs`, so a dead holder is always recovered. */
  maxWaitMs?: number;
  /** Called if the lock was taken over while `fn` still ran (see {@link withFileLock}). */
  onCompromised?: (error: Error) => void;
}

const DEFAULT_STALE_MS = 10_000;
const DEFAULT_MAX_WAIT_MS = 25_000;
const MAX_RETRY_DELAY_MS = 50;

/**
 * In-process queue per lock path. proper-lockfile only polls, so two callers in the same process would otherwise
 * wait on each other by sleeping; chaining them here keeps the hot path (several hooks of one session) at zero
 * delay. It is keyed by absolute path and holds nothing but pending promises, so several projects served by one
 * process never share an entry.
 */
const localQueues = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` while holding a cross-process lock on `path` (which need not exist): the lock is a directory
 * `<path>.lock` created with an atomic mkdir, refreshed every `staleMs / 2` while held.
 *
 * Tradeoff: a process killed while holding the lock leaves the directory behind, and others wait up to `staleMs`
 * before taking it over. The reverse risk is a holder frozen longer than `staleMs` (debugger, suspended laptop)
 * whose lock is taken over: both then run their read-modify-write, and the later rename wins. Files stay valid
 * because every write is atomic; at worst one update is lost and `onCompromised` reports it.
 *
 * Waiting longer than `maxWaitMs` throws an error with `code: "ELOCKED"`; errors thrown by `fn` propagate.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, opts: FileLockOptions = {}): Promise<T> {
  const key = resolve(path);
  const previous = localQueues.get(key) ?? Promise.resolve();
  const run = previous.then(
    () => lockAndRun(key, fn, opts),
    () => lockAndRun(key, fn, opts),
  );
  const tail = run.catch(() => undefined);
  localQueues.set(key, tail);
  try {
    return await run;
  } finally {
    if (localQueues.get(key) === tail) localQueues.delete(key);
  }
}

async function lockAndRun<T>(path: string, fn: () => Promise<T>, opts: FileLockOptions): Promise<T> {
  const staleMs = Math.max(opts.staleMs ?? DEFAULT_STALE_MS, 2_000);
  const maxWaitMs = opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  let compromised: Error | undefined;
  const options: LockOptions = {
    realpath: false,
    lockfilePath: `${path}.lock`,
    stale: staleMs,
    retries: 0,
    // The default throws from a timer, which would crash the host process.
    onCompromised: (error) => {
      compromised = error;
      opts.onCompromised?.(error);
    },
  };
  const release = await acquire(path, options, maxWaitMs);
  try {
    return await fn();
  } finally {
    if (!compromised) {
      await release().catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ERELEASED" && error.code !== "ENOTACQUIRED") throw error;
      });
    }
  }
}

/**
 * Only a lock held by someone else (`ELOCKED`) is worth waiting for. Anything else — `EACCES`/`EPERM` on a
 * root-owned folder, `EROFS`, `ENOSPC`, a missing folder — will not change by waiting, so it is thrown at once
 * (proper-lockfile's own retry loop would retry it for the whole `maxWaitMs`, stalling a hook ~25 s).
 */
async function acquire(path: string, options: LockOptions, maxWaitMs: number): Promise<() => Promise<void>> {
  const deadline = Date.now() + maxWaitMs;
  let delay = 2;
  for (;;) {
    try {
      return await lockfile.lock(path, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ELOCKED" || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)));
    delay = Math.min(MAX_RETRY_DELAY_MS, Math.ceil(delay * 1.3));
  }
}
