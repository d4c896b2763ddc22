import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";
import { AuditEvent } from "../../governance/storage/audit-log.ts";
import { matchesAuditType } from "../../governance/storage/audit-names.ts";
import { isBudgetKey, kindOf } from "../../governance/config/budget-kinds.ts";
import { formatDurationShort } from "../../governance/config/budget-units.ts";
import { safeJson } from "../output.ts";
import type { Style } from "../output.ts";
import type { CommandContext } from "./command-context.ts";

const FOLLOW_POLL_MS = 250;
const DEFAULT_LIMIT = 50;
/** More than the audit log keeps (its rotation size is 1 MB by default); a bigger file is read in parts by --follow. */
const MAX_READ = 16 * 1024 * 1024;

type Filter = (e: AuditEvent) => boolean;

function buildFilter(types: readonly string[], session: string | undefined): Filter {
  const wanted = types
    .flatMap((t) => t.split(","))
    .map((t) => t.trim())
    .filter(Boolean);
  return (e) => {
    // A renamed type is found under its old and its new name (governance/storage/audit-names.ts).
    if (wanted.length > 0 && !wanted.some((t) => matchesAuditType(e, t))) return false;
    if (session === undefined) return true;
    // A session's own events, and the events that name it (a parent notified about it, a child it spawned).
    return e.sessionId === session || Object.values(e).some((v) => v === session || (Array.isArray(v) && v.includes(session)));
  };
}

/** Complete lines of `text` parsed as audit events; torn or foreign lines are skipped. */
function parseEvents(text: string): AuditEvent[] {
  const out: AuditEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const parsed = AuditEvent.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // a torn line after a crash: skipped, as the audit reader does
    }
  }
  return out;
}

function typeStyle(type: string): Style {
  if (/error|blocked|violation|halt|quarantin|refused/.test(type)) return "red";
  if (/stop|interrupt|abort|orphan|dropped/.test(type)) return "yellow";
  if (/inject|notif/.test(type)) return "green";
  return "cyan";
}

function print(c: CommandContext, e: AuditEvent): void {
  if (c.options.json) {
    // JSON Lines: one event per line, as stored (documented in docs/cli.md).
    c.io.out(safeJson(e));
    return;
  }
  const { at, type, sessionId, ...rest } = e;
  const detail = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : (duration(rest, k, v) ?? JSON.stringify(v))}`.slice(0, 160))
    .join(" ");
  c.io.line(["dim", new Date(at).toISOString()], "  ", [typeStyle(type), type], `  ${sessionId ?? "-"}`, detail ? `  ${detail}` : "");
}

/**
 * A duration field as people read it (`startupMs=350ms`, `idleMs=3h`, a budget's activeTime `used=6s limit=2h`), the
 * way `status` and `sessions` print them; `--json` keeps the stored milliseconds.
 */
function duration(event: Record<string, unknown>, key: string, value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  const isDuration = /Ms$/.test(key) || ((key === "used" || key === "limit") && isBudgetKey(event.key) && kindOf(event.key).unit === "ms");
  if (!isDuration) return undefined;
  return Math.abs(value) < 1000 ? `${Math.round(value)}ms` : formatDurationShort(value);
}

/**
 * `log [--follow] [--type t[,t…]] [--session id] [--limit N] [--json]`: the audit log, oldest first. `--follow`
 * keeps printing new events as they are appended (across a rotation) until Ctrl-C.
 */
export async function logCommand(c: CommandContext): Promise<number> {
  const limit = c.options.limit === undefined ? DEFAULT_LIMIT : Number(c.options.limit);
  if (!Number.isInteger(limit) || limit < 0) return c.usage("--limit must be 0 (everything) or a positive number");
  const filter = buildFilter(c.options.type ?? [], c.options.session);
  const file = c.store.paths.auditLog;

  // The rotated files and the current log, read as bytes so --follow continues exactly where this read ended.
  let older = "";
  for (const rotated of [...c.audit.rotatedFiles()].reverse()) older += (await readLogFile(rotated))?.toString("utf8") ?? "";
  const current = (await readLogFile(file)) ?? Buffer.alloc(0);
  const complete = current.lastIndexOf(0x0a) + 1;
  const events = [...parseEvents(older), ...parseEvents(current.subarray(0, complete).toString("utf8"))].filter(filter);
  for (const e of limit === 0 ? events : events.slice(-limit)) print(c, e);
  if (!c.options.follow) return 0;

  let offset = complete;
  let inode = (await stat(file).catch(() => undefined))?.ino;
  let partial = Buffer.alloc(0);
  let stopped = false;
  const stop = () => (stopped = true);
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  process.stdout.on("error", stop); // the reader went away (`| head`)
  while (!stopped) {
    await new Promise((r) => setTimeout(r, FOLLOW_POLL_MS));
    const s = await stat(file).catch(() => undefined);
    if (!s) continue;
    if (s.ino !== inode || s.size < offset) {
      // Rotated (renamed away and recreated) or truncated: start the new file from its beginning.
      inode = s.ino;
      offset = 0;
      partial = Buffer.alloc(0);
    }
    if (s.size === offset) continue;
    const chunk = await readLogFile(file, offset);
    if (!chunk) continue;
    offset += chunk.length;
    const bytes = Buffer.concat([partial, chunk]);
    const cut = bytes.lastIndexOf(0x0a) + 1;
    partial = bytes.subarray(cut);
    for (const e of parseEvents(bytes.subarray(0, cut).toString("utf8")).filter(filter)) print(c, e);
  }
  return 0;
}

/**
 * The bytes of an audit file from `from` on (at most {@link MAX_READ}), or undefined when it is missing. A symlink or
 * anything but a regular file is refused (O_NOFOLLOW, non-blocking: a FIFO cannot hang the command).
 */
async function readLogFile(file: string, from = 0): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new Error(`${file} is a symbolic link; refusing to read it`);
    throw error;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${file} is not a regular file; refusing to read it`);
    const length = Math.max(0, Math.min(st.size - from, MAX_READ));
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
