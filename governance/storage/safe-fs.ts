import { constants, lstatSync, realpathSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname, isAbsolute, relative } from "node:path";

/**
 * File-system primitives for a folder that someone else may have prepared: a cloned repository can ship
 * `.opencode/governance/audit.log` as a symlink to `~/.bashrc`, a FIFO where a record is expected, or a 13 MB
 * "config". Every governance read and write goes through these, so none of them follows a link out of the project,
 * blocks on a FIFO or device, or reads an unbounded amount.
 *
 * What they do not defend against: a process of the same user racing the checks (it can write the user's files
 * directly anyway). The threat is a folder prepared in advance, not a concurrent attacker.
 */

/** State files are private to the user: audit lines and records may carry prompts, paths and agent output. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** Records, queue files and the config are small; anything larger is refused instead of read into memory. */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;

/** `O_NOFOLLOW` refuses a symlink as the last path component; `O_NONBLOCK` keeps a FIFO from blocking the open. */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** Errors that will not go away by waiting: a lock or write attempt ends at once on these. */
export const FATAL_FS_CODES: ReadonlySet<string> = new Set(["EACCES", "EPERM", "EROFS", "ENOSPC", "EDQUOT", "EUNSAFEPATH", "ENOTDIR", "ELOOP"]);

export function isFatalFsError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && FATAL_FS_CODES.has(code);
}

/** A path governance refuses to use: a symlink, a non-regular file, or a folder that resolves outside the project. */
export class UnsafePathError extends Error {
  readonly code = "EUNSAFEPATH";
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`refused ${path}: ${what}`);
    this.name = "UnsafePathError";
  }
}

function describe(path: string): string {
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (!st) return "missing";
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * `dir` is a real directory (not a symlink to one) or does not exist yet. Throws {@link UnsafePathError} otherwise.
 * Returns whether it exists. One `lstat`.
 */
export function checkRealDir(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st) return false;
  if (st.isSymbolicLink()) throw new UnsafePathError(dir, "a symbolic link where a folder is expected");
  if (!st.isDirectory()) throw new UnsafePathError(dir, `${describe(dir)} where a folder is expected`);
  return true;
}

/** `inner` is `outer` or below it (both absolute, already resolved). */
export function isInside(outer: string, inner: string): boolean {
  const rel = relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * `<project>/.opencode` may be used: a folder, or a symlink that resolves inside the project; missing is fine.
 * Throws {@link UnsafePathError}. Returns the project's real path (undefined when the project folder is missing).
 */
export function checkOpencodeDir(opencode: string): string | undefined {
  let realProject: string;
  try {
    realProject = realpathSync(dirname(opencode));
  } catch {
    return undefined; // No project folder: mkdir fails with its own clear error.
  }
  const dot = lstatSync(opencode, { throwIfNoEntry: false });
  if (dot?.isSymbolicLink()) {
    let target: string;
    try {
      target = realpathSync(opencode);
    } catch {
      throw new UnsafePathError(opencode, "a dangling symbolic link");
    }
    if (!isInside(realProject, target)) throw new UnsafePathError(opencode, `a symbolic link leading outside the project (to ${target})`);
  } else if (dot && !dot.isDirectory()) throw new UnsafePathError(opencode, `${describe(opencode)} where a folder is expected`);
  return realProject;
}

/**
 * The governance folder `<project>/.opencode/governance` may be used: `.opencode` passes {@link checkOpencodeDir},
 * `governance` itself is not a symlink, and its real path is inside the project. Throws {@link UnsafePathError};
 * a missing folder is fine (it will be created).
 */
export function checkGovernanceRoot(root: string): void {
  const realProject = checkOpencodeDir(dirname(root));
  if (realProject === undefined || !checkRealDir(root)) return;
  const realRoot = realpathSync(root);
  if (!isInside(realProject, realRoot)) throw new UnsafePathError(root, `resolves outside the project (to ${realRoot})`);
}

async function openChecked(file: string, flags: number, mode?: number): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file, flags | NOFOLLOW | NONBLOCK, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ELOOP: the last component is a symlink. ENXIO: a FIFO without a reader (write side).
    if (code === "ELOOP" || code === "ENXIO" || code === "EISDIR") throw new UnsafePathError(file, `${describe(file)} where a file is expected`);
    throw error;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new UnsafePathError(file, `${describe(file)} where a file is expected`);
    // A hard link to a file elsewhere (e.g. a shell start-up file) would be written through.
    if ((flags & (constants.O_WRONLY | constants.O_RDWR)) !== 0 && st.nlink > 1) throw new UnsafePathError(file, `a file with ${st.nlink} hard links`);
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/**
 * Reads a regular file as UTF-8, at most `maxBytes`: a symlink, FIFO, device or directory throws
 * {@link UnsafePathError} without blocking; a larger file throws an error with code `EFBIG`. ENOENT is thrown as is.
 */
export async function readRegularFile(file: string, maxBytes = MAX_STATE_FILE_BYTES): Promise<string> {
  const handle = await openChecked(file, constants.O_RDONLY);
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) throw Object.assign(new Error(`${file} is ${size} bytes, more than the ${maxBytes} allowed`), { code: "EFBIG" });
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(size, 0) + 1));
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw Object.assign(new Error(`${file} grew past the ${maxBytes} bytes allowed`), { code: "EFBIG" });
    return buffer.subarray(0, length).toString("utf8");
  } finally {
    await handle.close();
  }
}

/** Opens `file` for appending (and reading its last byte; created owner-only), refusing a symlink, a non-regular file or a hard-linked file. */
export function openForAppend(file: string): Promise<FileHandle> {
  return openChecked(file, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, FILE_MODE);
}

/** Creates `file` exclusively (owner-only); an existing entry of any kind, a dangling symlink included, is EEXIST. */
export function createExclusiveFile(file: string): Promise<FileHandle> {
  return open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, FILE_MODE);
}
