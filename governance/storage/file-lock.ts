import { lstat, lutimes, mkdir, rename, rmdir } from "node:fs/promises";
import { resolve } from "node:path";
import { DIR_MODE } from "./safe-fs.ts";

export interface FileLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long is taken over. Default 10 s, at least 2 s. Lower means a
   * killed process blocks others for less time; higher tolerates longer event-loop stalls.
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
 * In-process queue per lock path. The lock itself is only polled, so two callers in the same process would otherwise
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
  const held = await acquire(`${path}.lock`, staleMs, opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  try {
    return await fn();
  } finally {
    const lost = await held.release();
    if (lost) opts.onCompromised?.(lost);
  }
}

type Held = { release(): Promise<Error | undefined> };

/**
 * Takes the lock directory `dir` (an atomic `mkdir`, private to the user). While held, its mtime is refreshed every
 * `staleMs / 2` by an unref'd timer, so only a dead or frozen holder's lock ever looks stale. A stale lock is moved
 * aside (an atomic rename to a unique name, then removed) and taken.
 *
 * Only a lock held by someone else is worth waiting for. Anything else — `EACCES`/`EPERM` on a root-owned folder,
 * `EROFS`, `ENOSPC`, a missing folder — will not change by waiting, so it is thrown at once instead of stalling a hook
 * for `maxWaitMs`. A lock dated in the future (a clock change, or a hand-made folder) counts as stale, so it cannot
 * block governance forever.
 *
 * A hand-written lock replaces proper-lockfile here (docs/decisions/0006): the same mkdir protocol, without the
 * package's global patch of the host's `fs.close` (graceful-fs) and its 2.6 MiB / 6 ms of load in OpenCode's process.
 */
async function acquire(dir: string, staleMs: number, maxWaitMs: number): Promise<Held> {
  const deadline = Date.now() + maxWaitMs;
  let delay = 2;
  for (;;) {
    try {
      await mkdir(dir, { mode: DIR_MODE });
      return hold(dir, await lstat(dir), staleMs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (await takeOverIfStale(dir, staleMs)) continue;
    if (Date.now() >= deadline) throw Object.assign(new Error(`Lock file is already being held: ${dir}`), { code: "ELOCKED" });
    await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)));
    delay = Math.min(MAX_RETRY_DELAY_MS, Math.ceil(delay * 1.3));
  }
}

/** True when the lock at `dir` was stale and is gone now (or was released meanwhile): try to take it again at once. */
async function takeOverIfStale(dir: string, staleMs: number): Promise<boolean> {
  let mtimeMs: number;
  try {
    mtimeMs = (await lstat(dir)).mtimeMs;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  if (Math.abs(Date.now() - mtimeMs) <= staleMs) return false;
  const aside = `${dir}.stale-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  try {
    await rename(dir, aside);
  } catch (error) {
    // Another waiter moved it first: take part in the race for the new lock.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  await rmdir(aside).catch(() => undefined);
  return true;
}

/**
 * The held lock is recognised by its inode and the mtime this holder gave it (creation, then each refresh): a lock
 * taken over has a later mtime even where the file system reuses the inode number at once.
 */
function hold(dir: string, made: { ino: number; mtimeMs: number }, staleMs: number): Held {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let refreshing: Promise<void> | undefined;
  let released = false;
  let mtimeMs = made.mtimeMs;
  const schedule = () => {
    timer = setTimeout(() => {
      const now = new Date();
      refreshing = lutimes(dir, now, now).then(
        () => {
          mtimeMs = now.getTime();
        },
        () => undefined,
      );
      void refreshing.then(() => {
        refreshing = undefined;
        if (!released) schedule();
      });
    }, staleMs / 2);
    timer.unref?.();
  };
  schedule();
  return {
    async release() {
      released = true;
      clearTimeout(timer);
      // A refresh under way when `fn` ended is waited for: its new mtime is this holder's, not a takeover.
      await refreshing;
      const now = await lstat(dir).catch(() => undefined);
      // Taken over while `fn` ran (this holder looked dead): the lock is someone else's now, leave it.
      if (!now || now.ino !== made.ino || Math.abs(now.mtimeMs - mtimeMs) >= 1)
        return Object.assign(new Error(`Lock was taken over while held: ${dir}`), { code: "ECOMPROMISED" });
      await rmdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
      return undefined;
    },
  };
}
