import { lstat, lutimes, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isProcessAlive } from "./atomic-write.ts";
import { type LockOwner, ownerIsGone, parseOwner, thisProcess } from "./lock-owner.ts";
import { DIR_MODE } from "./safe-fs.ts";

export interface FileLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long is taken over. Default 10 s, at least 2 s. Lower means a
   * killed process blocks others for less time; higher tolerates longer event-loop stalls.
   */
  staleMs?: number;
  /** Give up (throw `ELOCKED`) after waiting about this long. Default 25 s: longer than `staleMs`, so a dead holder is always recovered. */
  maxWaitMs?: number;
  /**
   * A lock seen held by the same holder for longer than this is taken over even while its owner refreshes it: for
   * locks guarding work of milliseconds (a record's read-modify-write), where a longer hold is not real work but a
   * process keeping the lock to block others (issue 27: a subagent's shell held its own record's lock for 45 s and
   * froze a user's stop). Default: no bound (a live holder is waited for up to `maxWaitMs`).
   */
  maxHoldMs?: number;
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
 * The lock folders this process holds now. A lock whose owner file names this very process but which is not in this
 * set was not made by it (an owner file copied by another process of the user): taken over at once.
 */
const heldHere = new Set<string>();

/**
 * Runs `fn` while holding a cross-process lock on `path` (which need not exist): the lock is a directory
 * `<path>.lock`, made complete beside it and renamed into place (atomic; a rename never replaces a held lock), and
 * refreshed every `staleMs / 2` while held; released by renaming it aside in one step.
 *
 * The lock directory holds one small file, `owner` (host, pid, process start time), from the instant the lock exists
 * until it is gone. A lock whose owner is a process of this host that no longer runs (its pid is gone, or now belongs
 * to a process started later) is taken over at once: a killed `opencode run` costs the next process nothing.
 * Tradeoff: a lock without a readable owner (an older build's, or a hand-made folder), or one held on another host,
 * is only taken over once it is stale: others wait up to `staleMs`. The reverse risk is a holder frozen longer than `staleMs` (debugger, suspended laptop)
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
  const held = await acquire(`${path}.lock`, staleMs, opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, opts.maxHoldMs);
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
async function acquire(dir: string, staleMs: number, maxWaitMs: number, maxHoldMs?: number): Promise<Held> {
  const deadline = Date.now() + maxWaitMs;
  let delay = 2;
  /** The holder being waited for (its lock folder's inode) and since when. */
  let waitingFor: { ino: number; since: number } | undefined;
  // The lock folder is made complete beside the lock (its owner inside), then renamed into place: a held lock always
  // names its holder, even when the holder is killed the instant it took the lock (issue 21 item 4; a bare `mkdir`
  // then a write left an ownerless lock that others wait `staleMs` for).
  let staged: string | undefined;
  try {
    for (;;) {
      staged ??= await stage(dir);
      if (
        !(await lstat(dir).then(
          () => true,
          () => false,
        ))
      ) {
        // Marked as held before the rename: the periodic sweep of this process must never see it as a copied owner.
        heldHere.add(resolve(dir));
        try {
          await rename(staged, dir);
          staged = undefined;
          return hold(dir, await lstat(dir), staleMs);
        } catch (error) {
          if (staged) heldHere.delete(resolve(dir));
          // Taken meanwhile (a non-empty folder is never replaced by a rename): wait for it like any held lock.
          const code = (error as NodeJS.ErrnoException).code;
          if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
        }
      }
      const ino = await lstat(dir).then(
        (st) => st.ino,
        () => undefined,
      );
      if (ino !== undefined && waitingFor?.ino !== ino) waitingFor = { ino, since: Date.now() };
      const overdue = maxHoldMs !== undefined && waitingFor !== undefined && Date.now() - waitingFor.since > maxHoldMs;
      if (await takeOverIfStale(dir, staleMs, overdue)) continue;
      if (Date.now() >= deadline) throw Object.assign(new Error(`Lock file is already being held: ${dir}`), { code: "ELOCKED" });
      await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)));
      delay = Math.min(MAX_RETRY_DELAY_MS, Math.ceil(delay * 1.3));
    }
  } finally {
    if (staged) await removeAside(staged);
  }
}

/** A lock folder with this process as its owner, beside the lock (`<lock>.new-<pid>-<random>`), ready to be renamed in. */
async function stage(dir: string): Promise<string> {
  const staged = `${dir}.new-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  await mkdir(staged, { mode: DIR_MODE });
  await writeFile(join(staged, OWNER_FILE), thisProcess().text, { mode: 0o600 });
  return staged;
}

/** The file inside a lock directory that names its holder (see lock-owner.ts). */
const OWNER_FILE = "owner";

async function readOwner(dir: string): Promise<LockOwner | undefined> {
  try {
    return parseOwner(await readFile(join(dir, OWNER_FILE), "utf8"));
  } catch {
    return undefined;
  }
}

/** The owner file names this process (same host, pid and start), but this process does not hold the lock. */
function forgedAsThisProcess(dir: string, owner: LockOwner): boolean {
  const me = thisProcess();
  return owner.host === me.host && owner.pid === me.pid && owner.start === me.start && !heldHere.has(resolve(dir));
}

/** Removes a lock directory that was moved aside (its owner file included). */
async function removeAside(aside: string): Promise<void> {
  await rm(aside, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * True when the lock at `dir` is gone now (released meanwhile, or taken over here because its holder is dead or it
 * is stale): try to take it again at once.
 */
async function takeOverIfStale(dir: string, staleMs: number, overdue = false): Promise<boolean> {
  let seen: { ino: number; mtimeMs: number };
  try {
    seen = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  const stale = overdue || Math.abs(Date.now() - seen.mtimeMs) > staleMs;
  if (!stale) {
    const owner = await readOwner(dir);
    if (!owner || !(forgedAsThisProcess(dir, owner) || (await ownerIsGone(owner)))) return false;
  }
  const aside = `${dir}.stale-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  try {
    await rename(dir, aside);
  } catch (error) {
    // Another waiter moved it first: take part in the race for the new lock.
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw error;
  }
  // Between the look and the rename another waiter may have taken the dead lock over and made a new one: that one is
  // live, put it back (if the folder was re-made meanwhile, its holder's release reports the lock as taken over).
  const moved = await lstat(aside).catch(() => undefined);
  if (
    moved &&
    moved.ino !== seen.ino &&
    !(await rename(aside, dir).then(
      () => true,
      () => false,
    ))
  )
    await removeAside(aside);
  else if (!moved || moved.ino === seen.ino) await removeAside(aside);
  return true;
}

/** A lock this process holds: refreshed by the one shared ticker below while it is held. */
type Holding = { dir: string; staleMs: number; refreshedAt: number; mtimeMs: number; refreshing: Promise<void> | undefined };

/**
 * Every lock this process holds, refreshed by ONE unref'd interval (every quarter of the shortest `staleMs` held),
 * not a timer per hold: a busy session takes a record lock every second (its write-behind), and creating and
 * clearing a timer per hold showed in the host's profile (issue 31). A lock is refreshed once it is half its
 * `staleMs` old, so its mtime is never older than three quarters of it. The interval stops on a tick that finds
 * nothing held.
 */
const holdings = new Set<Holding>();
let ticker: { timer: ReturnType<typeof setInterval>; everyMs: number } | undefined;

function watchHeld(staleMs: number): void {
  const everyMs = staleMs / 4;
  if (ticker && ticker.everyMs <= everyMs) return;
  if (ticker) clearInterval(ticker.timer);
  const timer = setInterval(refreshHeld, everyMs);
  timer.unref?.();
  ticker = { timer, everyMs };
}

function refreshHeld(): void {
  if (holdings.size === 0) {
    if (ticker) clearInterval(ticker.timer);
    ticker = undefined;
    return;
  }
  for (const h of holdings) {
    if (h.refreshing || Date.now() - h.refreshedAt < h.staleMs / 2) continue;
    const now = new Date();
    h.refreshing = lutimes(h.dir, now, now).then(
      () => {
        h.mtimeMs = now.getTime();
        h.refreshedAt = now.getTime();
      },
      () => undefined,
    );
    void h.refreshing.then(() => {
      h.refreshing = undefined;
    });
  }
}

/**
 * The held lock is recognised by its inode and the mtime this holder gave it (creation, then each refresh): a lock
 * taken over has a later mtime even where the file system reuses the inode number at once.
 */
function hold(dir: string, made: { ino: number; mtimeMs: number }, staleMs: number): Held {
  const holding: Holding = { dir, staleMs, refreshedAt: Date.now(), mtimeMs: made.mtimeMs, refreshing: undefined };
  holdings.add(holding);
  watchHeld(staleMs);
  return {
    async release() {
      holdings.delete(holding);
      heldHere.delete(resolve(dir));
      // A refresh under way when `fn` ended is waited for: its new mtime is this holder's, not a takeover.
      await holding.refreshing;
      const mtimeMs = holding.mtimeMs;
      const now = await lstat(dir).catch(() => undefined);
      // Taken over while `fn` ran (this holder looked dead): the lock is someone else's now, leave it.
      if (!now || now.ino !== made.ino || Math.abs(now.mtimeMs - mtimeMs) >= 1)
        return Object.assign(new Error(`Lock was taken over while held: ${dir}`), { code: "ECOMPROMISED" });
      // Moved aside first, owner and all, so the lock is gone in one step: a holder killed while releasing leaves an
      // aside folder the sweep removes, never an ownerless lock that others would wait for.
      const aside = `${dir}.stale-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
      const moved = await rename(dir, aside).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code !== "ENOENT") throw error;
          return false;
        },
      );
      if (moved) await removeAside(aside);
      return undefined;
    },
  };
}

/**
 * Removes the lock folders in `dir` that nobody holds any more: a dead owner's (at once) or a stale one (not
 * refreshed for `staleMs`), and the aside copies a takeover left when its process died mid-way. A live holder's
 * lock is never touched. Returns how many were removed. For the periodic sweep (plugin/sessions/maintenance.ts):
 * a lock of a session nobody touches again would otherwise stay forever.
 */
export async function sweepDeadLocks(dir: string, staleMs = DEFAULT_STALE_MS): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    const beside = /\.lock\.(?:stale|new)-(\d+)-/.exec(name);
    if (beside) {
      // A folder moved aside or being staged belongs to the process named in it: once that process is gone nobody
      // will use it (removed at once); otherwise only when stale.
      const st = await lstat(path).catch(() => undefined);
      if (st?.isDirectory() && (!isProcessAlive(Number(beside[1])) || Date.now() - st.mtimeMs > staleMs)) {
        await removeAside(path);
        removed++;
      }
    } else if (name.endsWith(".lock")) {
      const st = await lstat(path).catch(() => undefined);
      if (st?.isDirectory() && (await takeOverIfStale(path, staleMs).catch(() => false)) && !(await lstat(path).catch(() => undefined))) removed++;
    }
  }
  return removed;
}
