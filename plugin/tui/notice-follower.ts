import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** One governance notice: what OpenCode 1 shows as a toast, written on OpenCode 2 as a `host_notice` audit line. */
export type Notice = { message: string; variant: "info" | "warning" | "error"; sessionId?: string };

/** Longest notice text shown; governance's own are shorter (a toast is a line or two, not a report). */
const MAX_MESSAGE = 300;
/** Most bytes read in one poll: a burst beyond it is skipped, never buffered without bound. */
const MAX_READ = 256 * 1024;
const VARIANTS = new Set(["info", "warning", "error"]);
/** OpenCode's session ids (`ses_` + letters and digits): anything else is not offered as a place to open. */
const SESSION_ID = /^ses_[A-Za-z0-9]{1,64}$/;

/**
 * The notice an audit line carries, or undefined. The line comes from a file in the project (untrusted, like every
 * file under `.opencode/`): only a `host_notice` with a string message and a known variant is taken, its text cut to
 * one toast and stripped of control characters (a line break stays), and a session id only when it is one.
 */
export function parseNoticeLine(line: string): Notice | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { type, message, variant, sessionId } = parsed as Record<string, unknown>;
  if (type !== "host_notice" || typeof message !== "string" || typeof variant !== "string" || !VARIANTS.has(variant)) return undefined;
  const text = message
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, "")
    .slice(0, MAX_MESSAGE)
    .trim();
  if (text === "") return undefined;
  return { message: text, variant: variant as Notice["variant"], ...(typeof sessionId === "string" && SESSION_ID.test(sessionId) ? { sessionId } : {}) };
}

/**
 * Follows `audit.log` from where it ends when `start` runs: each poll reads what was appended since (a line at a time,
 * a torn last line kept for the next poll) and hands every notice to `onNotice`. A rotation (the file replaced, or
 * shorter than what was read) starts over at the new file's beginning. The file is opened without following a
 * symlink and must be a regular file; a missing file is an empty one. Never throws.
 */
export class NoticeFollower {
  #offset = 0;
  #inode = -1;
  #rest = "";
  #busy = false;

  constructor(
    private readonly file: string,
    private readonly onNotice: (notice: Notice) => void,
  ) {}

  /** Skips what the log holds now: only notices written from here on are shown. */
  async start(): Promise<void> {
    const at = await this.#stat();
    this.#offset = at?.size ?? 0;
    this.#inode = at?.ino ?? -1;
  }

  /** Reads what was appended since the last poll (polls never overlap). */
  async poll(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      await this.#read();
    } catch {
      // A notice not shown is the only loss; the next poll tries again.
    } finally {
      this.#busy = false;
    }
  }

  async #stat(): Promise<{ size: number; ino: number } | undefined> {
    const handle = await open(this.file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)).catch(() => undefined);
    if (!handle) return undefined;
    try {
      const st = await handle.stat();
      return st.isFile() ? { size: st.size, ino: st.ino } : undefined;
    } finally {
      await handle.close();
    }
  }

  async #read(): Promise<void> {
    const handle = await open(this.file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)).catch(() => undefined);
    if (!handle) return;
    try {
      const st = await handle.stat();
      if (!st.isFile()) return;
      if (st.ino !== this.#inode || st.size < this.#offset) {
        this.#inode = st.ino;
        this.#offset = 0;
        this.#rest = "";
      }
      if (st.size === this.#offset) return;
      if (st.size - this.#offset > MAX_READ) {
        this.#offset = st.size - MAX_READ;
        this.#rest = "";
      }
      const buffer = Buffer.alloc(st.size - this.#offset);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.#offset);
      this.#offset += bytesRead;
      const lines = (this.#rest + buffer.subarray(0, bytesRead).toString("utf8")).split("\n");
      this.#rest = (lines.pop() ?? "").slice(-MAX_READ);
      for (const line of lines) {
        const notice = parseNoticeLine(line);
        if (notice) this.onNotice(notice);
      }
    } finally {
      await handle.close();
    }
  }
}
