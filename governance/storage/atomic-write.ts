import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { isZombieStat } from "./lock-owner.ts";
import { createExclusiveFile } from "./safe-fs.ts";

/**
 * Temp files are `.<target>.<pid>.<random>.tmp`: hidden, never matching a record/queue name, and carrying the
 * writer's pid so a later sweep can tell a dead writer's leftover from a write still in flight.
 */
const TEMP_PATTERN = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/;

export function tempNameFor(target: string): string {
  return `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
}

export function isTempName(name: string): boolean {
  return TEMP_PATTERN.test(name);
}

/**
 * Replaces `path` with `data` so that readers (and a crash at any instant) see either the old or the new content,
 * never a mix: write a temp file in the same folder, fsync it, rename over the target, fsync the folder.
 * The temp file is created owner-only (0600) with `O_EXCL|O_NOFOLLOW`, so a planted symlink at its name is never
 * followed, and the rename replaces a symlink at `path` instead of writing through it. The temp file is removed on any failure; only a SIGKILL between open and rename can leave one behind, under a name
 * {@link sweepTempFiles} recognizes. I/O errors are thrown.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, tempNameFor(path));
  try {
    const handle = await createExclusiveFile(temp);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dir);
}

/**
 * Makes a rename durable. Platforms that cannot open or fsync a directory (Windows, some network file systems)
 * are skipped silently: the rename itself is still atomic there, only its durability across power loss is weaker.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "EPERM" && code !== "EINVAL" && code !== "EACCES" && code !== "ENOTSUP") {
      throw error;
    }
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * True unless the OS says no such process exists, or /proc says it has exited and waits only to be reaped (a zombie).
 * EPERM (alive, another user) counts as alive: when in doubt, never treat another writer's file as abandoned.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  try {
    return !isZombieStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/**
 * Removes temp files left in `dir` by writers that no longer run (killed mid-write). Files of live processes are
 * left alone, so a concurrent writer's rename never fails. Tradeoff: pids are host-local, so on a folder shared by
 * several machines a remote writer's in-flight temp could be removed; its write then fails loudly, never silently.
 * Returns the removed names.
 */
export async function sweepTempFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_PATTERN.exec(name);
    if (!match || isProcessAlive(Number(match[1]))) continue;
    await rm(join(dir, name), { force: true });
    removed.push(name);
  }
  return removed;
}
