import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Queue directives are signed with an HMAC key that lives OUTSIDE every project: `$XDG_STATE_HOME/opencode-governance/
 * queue-key` (default `~/.local/state/opencode-governance/queue-key`), a 0600 file in a 0700 folder, created by
 * whichever of the CLI, the dashboard or the plugin needs it first. A repository the user cloned, or a model's `write`
 * into `.opencode/`, can put files in a queue but cannot sign them, so they are set aside and audited, never delivered
 * (OpenCode asks before its tools read outside the project: the `external_directory` permission).
 *
 * Fails closed: a key file that is a symlink, not a regular file, not owned by this user, readable by group/others, or
 * malformed is refused, and then nothing is signed or accepted. The key is cached per path for the process lifetime
 * (it never changes once created; a per-user constant, not session state).
 */

export const KEY_FILE_NAME = "queue-key";
const SIGNATURE = /^[0-9a-f]{64}$/;
const cache = new Map<string, Buffer>();

export type KeyResult = { ok: true; key: Buffer; file: string } | { ok: false; reason: string };

/** Where the key lives for this environment. */
export function keyFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), ".local", "state");
  return path.join(base, "opencode-governance", KEY_FILE_NAME);
}

/** The user's key, created on first use. Never throws. */
export function loadKey(env: NodeJS.ProcessEnv = process.env): KeyResult {
  const file = keyFile(env);
  const cached = cache.get(file);
  if (cached) return { ok: true, key: cached, file };
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    if (!fs.existsSync(file) && !isSymlink(file)) create(file);
    const key = read(file);
    if (typeof key === "string") return { ok: false, reason: `signing key ${file}: ${key}` };
    cache.set(file, key);
    return { ok: true, key, file };
  } catch (error) {
    return { ok: false, reason: `signing key ${file}: ${(error as Error).message}` };
  }
}

function isSymlink(file: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Written under a temp name and hard-linked into place: a concurrent reader sees no file or the whole key. */
function create(file: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function read(file: string): Buffer | string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ELOOP" ? "is a symlink; refused" : (error as Error).message;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return "not a regular file; refused";
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return "not owned by this user; refused";
    if ((st.mode & 0o077) !== 0) return `readable by others (mode ${(st.mode & 0o777).toString(8)}); refused — chmod 600 it`;
    const buf = Buffer.alloc(128);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    const hex = buf.subarray(0, n).toString("utf8").trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) return "malformed (expected 64 hex digits); refused";
    return Buffer.from(hex, "hex");
  } finally {
    fs.closeSync(fd);
  }
}

/** What is signed: a domain tag, the target session and the directive exactly as the schema parsed it. */
function payload(sessionId: string, directive: unknown): string {
  return JSON.stringify(["opencode-governance/directive/v1", sessionId, directive]);
}

export function sign(key: Buffer, sessionId: string, directive: unknown): string {
  return createHmac("sha256", key).update(payload(sessionId, directive)).digest("hex");
}

export function verify(key: Buffer, sessionId: string, directive: unknown, signature: unknown): boolean {
  if (typeof signature !== "string" || !SIGNATURE.test(signature)) return false;
  return timingSafeEqual(Buffer.from(sign(key, sessionId, directive), "hex"), Buffer.from(signature, "hex"));
}
