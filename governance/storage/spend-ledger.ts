import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as z from "../zod.ts";
import { keyFile, sign, verify } from "./directive-signing.ts";
import { DIR_MODE, FILE_MODE } from "./safe-fs.ts";

/**
 * The spend ledger of budgets over time (issue 44, docs/decisions/0065-spend-ledger.md): what every OpenCode process
 * of a project (or of the user) spent, per day, as **one append-only file per writer and day**
 * (`<day>.<writer>.jsonl`). A process appends only to its own file, one `write` per line with O_APPEND, and nobody
 * ever rewrites a line: there is no read-modify-write, so no count can be lost between writers, and a restart starts a
 * new file beside the old ones, which still count. A reader sums every file of the days it asks for, reading only
 * the bytes added since its last look, and only up to the last newline (a line being written, or cut by a kill, is
 * not read; a cut line stays unread, and costs at most that one line).
 *
 * Where: the project's ledger in `.opencode/governance/spend/` (read-only to a governed agent's shell and file
 * tools: the whole `.opencode/` is in the protected set), the user's in the key's folder (`$XDG_STATE_HOME/
 * opencode-governance/spend/`: hidden from it). A raise (`opencode-governance budget --project --add …`) is a line
 * signed with the user's key: one not signed by it counts for nothing.
 *
 * Amounts are plain `name → number` maps; which names mean what is the caller's (governance/budget/spend-caps.ts).
 */
export type SpendAmounts = Record<string, number>;

const Amounts = z.record(z.string().min(1).max(40), z.number().finite().min(0).max(1e15));
export const SpendRaise = z.object({
  id: z.string().min(8).max(64),
  /** The cap it raises: the day's (`daily`) or the week's (`weekly`) that the line's day falls in. */
  period: z.enum(["daily", "weekly"]),
  add: Amounts,
  by: z.string().max(100),
});
export type SpendRaise = z.infer<typeof SpendRaise>;

const Line = z.union([
  z.object({ at: z.number().int(), use: Amounts, s: z.string().max(80).optional() }),
  z.object({ at: z.number().int(), raise: SpendRaise, sig: z.string() }),
]);

/** Days a ledger keeps: a week's sum needs at most 7; older files are removed when a writer opens the ledger. */
const KEEP_DAYS = 15;
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.([A-Za-z0-9-]{1,64})\.jsonl$/;
/** A ledger file larger than this is not read further (a writer appends ~150 bytes per model step). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The project's ledger folder. */
export function projectLedgerDir(projectDir: string): string {
  return path.join(path.resolve(projectDir), ".opencode", "governance", "spend");
}

/** The user's ledger folder, beside the key (hidden from a governed agent). */
export function userLedgerDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(keyFile(env)), "spend");
}

/** What the files of some days add up to: use by name, and the raises whose signature checks out, per day. */
export type LedgerSum = { use: SpendAmounts; raises: Array<SpendRaise & { day: string }>; lines: number; refused: number };

type FileState = { day: string; offset: number; use: SpendAmounts; raises: SpendRaise[]; lines: number; refused: number };

const RAISE_DOMAIN = "spend-ledger";

export function signRaise(key: Buffer, day: string, raise: SpendRaise): string {
  return sign(key, `${RAISE_DOMAIN}:${day}`, raise);
}

/**
 * One ledger folder, for one writer (a plugin instance, a CLI raise) and any number of reads. Every method is
 * synchronous and throws only for I/O the caller contains; reading never throws for a bad line (it is counted in
 * `refused` and skipped).
 */
export class SpendLedger {
  readonly writer: string;
  readonly #files = new Map<string, FileState>();
  #ready = false;

  constructor(
    readonly dir: string,
    /** The user's key, to check raises (none: no raise counts). */
    readonly key: Buffer | null,
    writerTag = "p",
  ) {
    this.writer = `${writerTag}${process.pid}-${randomBytes(4).toString("hex")}`;
  }

  #prepare(): void {
    if (this.#ready) return;
    fs.mkdirSync(this.dir, { recursive: true, mode: DIR_MODE });
    const st = fs.lstatSync(this.dir);
    if (!st.isDirectory()) throw new Error(`spend ledger ${this.dir} is not a folder`);
    this.#ready = true;
  }

  /** Appends one line to this writer's file of `day`: one write, so a line is whole or (after a kill) unread. */
  #append(day: string, line: object): void {
    this.#prepare();
    const file = path.join(this.dir, `${day}.${this.writer}.jsonl`);
    const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, FILE_MODE);
    try {
      fs.writeSync(fd, `${JSON.stringify(line)}\n`);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Adds use to `day` (amounts of 0 are left out; nothing left, nothing written). */
  add(day: string, at: number, use: SpendAmounts, sessionId?: string): void {
    const kept = Object.fromEntries(Object.entries(use).filter(([, v]) => v > 0));
    if (Object.keys(kept).length === 0) return;
    this.#append(day, sessionId ? { at, use: kept, s: sessionId } : { at, use: kept });
  }

  /** A raise of `day`'s cap (or its week's), signed with the user's key. */
  raise(day: string, at: number, raise: SpendRaise): void {
    if (!this.key) throw new Error("no signing key: a raise cannot be signed");
    this.#append(day, { at, raise, sig: signRaise(this.key, day, raise) });
  }

  /** The sum of every writer's files of `days` (new bytes only since the last call). */
  sum(days: readonly string[]): LedgerSum {
    const want = new Set(days);
    const out: LedgerSum = { use: {}, raises: [], lines: 0, refused: 0 };
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return out;
      throw error;
    }
    for (const name of names) {
      const m = DAY_FILE.exec(name);
      if (!m || !want.has(m[1] as string)) continue;
      const state = this.#read(name, m[1] as string);
      if (!state) continue;
      for (const [k, v] of Object.entries(state.use)) out.use[k] = (out.use[k] ?? 0) + v;
      // A raise counts once, whichever files hold it (its id is its nonce; the signature binds it to its day).
      for (const r of state.raises) if (!out.raises.some((x) => x.id === r.id)) out.raises.push({ ...r, day: state.day });
      out.lines += state.lines;
      out.refused += state.refused;
    }
    return out;
  }

  #read(name: string, day: string): FileState | undefined {
    const file = path.join(this.dir, name);
    let state = this.#files.get(name);
    if (!state) {
      state = { day, offset: 0, use: {}, raises: [], lines: 0, refused: 0 };
      this.#files.set(name, state);
    }
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch {
      return state;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return undefined;
      const end = Math.min(st.size, MAX_FILE_BYTES);
      if (end <= state.offset) return state;
      const buf = Buffer.alloc(end - state.offset);
      const got = fs.readSync(fd, buf, 0, buf.length, state.offset);
      const text = buf.subarray(0, got).toString("utf8");
      const last = text.lastIndexOf("\n");
      if (last < 0) return state;
      state.offset += Buffer.byteLength(text.slice(0, last + 1));
      for (const raw of text.slice(0, last).split("\n")) this.#take(state, raw);
      return state;
    } finally {
      fs.closeSync(fd);
    }
  }

  #take(state: FileState, raw: string): void {
    let parsed: z.infer<typeof Line> | undefined;
    try {
      const p = Line.safeParse(JSON.parse(raw));
      parsed = p.success ? p.data : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed) {
      state.refused++;
      return;
    }
    state.lines++;
    if ("use" in parsed) {
      for (const [k, v] of Object.entries(parsed.use)) state.use[k] = (state.use[k] ?? 0) + v;
      return;
    }
    const ok = this.key !== null && verify(this.key, `${RAISE_DOMAIN}:${state.day}`, parsed.raise, parsed.sig);
    if (ok && !state.raises.some((r) => r.id === parsed.raise.id)) state.raises.push(parsed.raise);
    else if (!ok) state.refused++;
  }

  /** Removes files of days before `today` − 15 days (by name; never a file of another shape). */
  prune(today: string): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    const cutoff = new Date(`${today}T00:00:00Z`).getTime() - KEEP_DAYS * 86_400_000;
    for (const name of names) {
      const m = DAY_FILE.exec(name);
      if (!m) continue;
      const t = new Date(`${m[1]}T00:00:00Z`).getTime();
      if (Number.isFinite(t) && t < cutoff) {
        fs.rmSync(path.join(this.dir, name), { force: true });
        this.#files.delete(name);
      }
    }
  }
}
