import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import * as z from "../zod.ts";
import { isProcessAlive, sweepTempFiles, writeFileAtomic } from "../storage/atomic-write.ts";
import { systemClock, type Clock } from "../time/clock.ts";
import { ensureGovernanceDir, sessionScopedPath, type GovernancePaths, type PathResult } from "../storage/governance-paths.ts";
import { parseJsonText, quarantineFile, type StoreProblem } from "../storage/quarantine.ts";
import { NoticeHow, SessionId, StopLevel } from "../session/session-record.ts";
import { checkRealDir, DIR_MODE, readRegularFile } from "../storage/safe-fs.ts";
import { loadKey, sign, verify } from "../storage/directive-signing.ts";
import { BudgetAmounts } from "../config/budget-config.ts";

export const DirectiveId = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, "directive id: 1-100 of [A-Za-z0-9_-]");

export const StopDirective = z.object({
  kind: z.literal("stop"),
  id: DirectiveId,
  at: z.number().int(),
  level: StopLevel,
  reason: z.string().max(500),
  by: z.string().max(100),
});
export type StopDirective = z.infer<typeof StopDirective>;
/** Guidance for the session's model; content checks (length, injection patterns) happen before enqueueing. */
export const InjectDirective = z.object({
  kind: z.literal("inject"),
  id: DirectiveId,
  at: z.number().int(),
  text: z.string().max(100_000),
  by: z.string().max(100),
});
export type InjectDirective = z.infer<typeof InjectDirective>;
/**
 * A parent's child was stopped. Structured data only, never free text: the receiving process renders the message at
 * delivery from its own records of the child (see `renderNotification`), so a queue file cannot carry words to a model.
 */
export const NotifyDirective = z.object({
  kind: z.literal("notify"),
  id: DirectiveId,
  at: z.number().int(),
  childId: SessionId,
  how: NoticeHow,
});
export type NotifyDirective = z.infer<typeof NotifyDirective>;
/** A user raised a running session's (or, on a root, its task tree's) budget: `opencode-governance budget … --add`. */
export const BudgetDirective = z.object({
  kind: z.literal("budget"),
  id: DirectiveId,
  at: z.number().int(),
  scope: z.enum(["session", "tree"]),
  add: BudgetAmounts,
  by: z.string().max(100),
});
export type BudgetDirective = z.infer<typeof BudgetDirective>;
export const Directive = z.discriminatedUnion("kind", [StopDirective, InjectDirective, NotifyDirective, BudgetDirective]);
export type Directive = z.infer<typeof Directive>;

/**
 * What one queue file holds: the directive, the envelope every persisted shape carries, and the HMAC of both under the
 * user's key (directive-signing.ts). A file without a valid signature is never delivered.
 */
export const QueueFile = z.object({ schemaVersion: z.literal(1), sessionId: SessionId, directive: Directive, sig: z.string().max(200).optional() });
export type QueueFile = z.infer<typeof QueueFile>;

export type EnqueueResult = { ok: true; file: string } | { ok: false; reason: string };

export interface ClaimOptions {
  /** Called once per malformed file moved to quarantine. Must not throw. */
  onProblem?: (problem: StoreProblem) => void;
  /** Stamps quarantine notes. Default: the system clock. */
  clock?: Clock;
  /**
   * Claim only these kinds; the others stay queued, in order, for a later claim. Costs one extra read per pending
   * file. Malformed files are quarantined whatever the filter.
   */
  kinds?: readonly Directive["kind"][];
  /** Claim only the directives with these ids; the others stay queued. Costs one extra read per pending file. */
  ids?: ReadonlySet<string>;
}

/** `<ms:15>-<counter:8>-<pid>-<random>.json`: lexical order is FIFO order (by `at`, then per-process sequence). */
const PENDING = /^\d{15}-\d{8}-\d+-[0-9a-f]{8}\.json$/;
/** A claimed file is `.claimed/<pending name>~<claimer pid>~<token>`: the claimer's pid lets a crashed claim be re-queued. */
const CLAIMED = /^(\d{15}-\d{8}-\d+-[0-9a-f]{8}\.json)~(\d+)~[0-9a-f]+$/;
const CLAIMED_DIR = ".claimed";

/** Makes names unique within a process even for directives enqueued in the same millisecond. */
let sequence = 0;

/** `queues/<sessionId>/`, or a reason when the id is not a session id. Watch it to learn about new directives. */
export function queueDir(paths: GovernancePaths, sessionId: unknown): PathResult {
  return sessionScopedPath(paths.queues, sessionId);
}

/**
 * Adds a directive for a session. Safe from any number of processes at once: each directive is its own file,
 * written under a temp name and renamed into place, so a consumer never sees half a directive.
 * Invalid ids or directives are returned as reasons; I/O errors are thrown.
 */
export async function enqueue(paths: GovernancePaths, sessionId: string, directive: Directive): Promise<EnqueueResult> {
  const dir = queueDir(paths, sessionId);
  if (!dir.ok) return dir;
  const parsed = Directive.safeParse(directive);
  if (!parsed.success) return { ok: false, reason: `invalid directive: ${z.prettifyError(parsed.error)}` };
  const key = loadKey();
  if (!key.ok) return { ok: false, reason: key.reason };
  await ensureGovernanceDir(paths);
  // Not recursive: `queues/` exists, and a recursive mkdir reports ENOENT instead of EROFS on a read-only mount.
  await mkdir(dir.path, { mode: DIR_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  checkRealDir(dir.path);
  sequence = (sequence + 1) % 100_000_000;
  const ms = String(Math.max(0, Math.trunc(parsed.data.at))).padStart(15, "0");
  const name = `${ms}-${String(sequence).padStart(8, "0")}-${process.pid}-${randomBytes(4).toString("hex")}.json`;
  const file = join(dir.path, name);
  const content: QueueFile = { schemaVersion: 1, sessionId, directive: parsed.data, sig: sign(key.key, sessionId, parsed.data) };
  await writeFileAtomic(file, `${JSON.stringify(content)}\n`);
  return { ok: true, file };
}

/** Number of pending directives: one `readdir`, no parsing. Throws on an invalid id (a caller bug). */
export async function pendingCount(paths: GovernancePaths, sessionId: string): Promise<number> {
  return (await pendingNames(checkedDir(paths, sessionId))).length;
}

/**
 * Takes every pending directive of a session, in FIFO order, de-duplicated by `id` within the batch.
 * Each file is claimed by renaming it into `.claimed/`: only one consumer's rename can succeed, so two consumers
 * never deliver the same file. Claimed files are deleted before returning; claims left by a consumer that died
 * first are put back in the queue. Malformed files are quarantined (not delivered, not lost).
 *
 * Tradeoff: delivery is at-most-once from the moment this returns; a consumer that crashes before acting on the
 * result loses those directives (the stop request itself also lives in the session record). Duplicate ids are only
 * collapsed within one batch; an id re-enqueued after delivery is delivered again.
 * Throws on an invalid id (a caller bug) and on I/O errors.
 */
export async function claimAll(paths: GovernancePaths, sessionId: string, options: ClaimOptions = {}): Promise<Directive[]> {
  const dir = checkedDir(paths, sessionId);
  const claimedDir = join(dir, CLAIMED_DIR);
  await requeueAbandonedClaims(dir, claimedDir);
  const names = await pendingNames(dir);
  if (names.length === 0) return [];
  await mkdir(claimedDir, { mode: DIR_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  checkRealDir(claimedDir);
  const token = randomBytes(4).toString("hex");
  const wanted = options.kinds ? new Set<string>(options.kinds) : undefined;
  const claimed: { name: string; file: string }[] = [];
  for (const name of names) {
    if (wanted || options.ids) {
      const peeked = await readPending(join(dir, name), sessionId);
      if (!peeked || (peeked.ok && ((wanted && !wanted.has(peeked.directive.kind)) || (options.ids && !options.ids.has(peeked.directive.id))))) continue;
    }
    const file = join(claimedDir, `${name}~${process.pid}~${token}`);
    try {
      await rename(join(dir, name), file);
      claimed.push({ name, file });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  const directives: Directive[] = [];
  const seen = new Set<string>();
  for (const { name, file } of claimed) {
    const decoded = (await readPending(file, sessionId)) ?? { ok: false, reason: "vanished after it was claimed" };
    if (!decoded.ok) {
      // A directory, FIFO or symlink under a queue file's name is moved aside like any malformed file: that one
      // entry is skipped, the rest of the batch is delivered.
      const moved = await quarantineFile(paths, file, decoded.reason, options.clock ?? systemClock, `queue-${sessionId}-`);
      if (moved.ok) report(options, { ...moved.problem, file: join(dir, name) });
      else if (!moved.gone) report(options, { kind: "io_error", file: join(dir, name), reason: moved.reason, at: (options.clock ?? systemClock).now() });
      continue;
    }
    if (!seen.has(decoded.directive.id)) {
      seen.add(decoded.directive.id);
      directives.push(decoded.directive);
    }
    await rm(file, { force: true });
  }
  return directives;
}

/**
 * The pending directives of a session, in FIFO order and de-duplicated by id, without claiming them: what a
 * watcher uses to react early (e.g. start a stop deadline) while delivery still goes through {@link claimAll}.
 * Malformed files are skipped here and quarantined by the next claim. Throws on an invalid id (a caller bug).
 */
export async function peekAll(paths: GovernancePaths, sessionId: string): Promise<Directive[]> {
  const dir = checkedDir(paths, sessionId);
  const seen = new Set<string>();
  const directives: Directive[] = [];
  for (const name of await pendingNames(dir)) {
    const decoded = await readPending(join(dir, name), sessionId);
    if (!decoded?.ok || seen.has(decoded.directive.id)) continue;
    seen.add(decoded.directive.id);
    directives.push(decoded.directive);
  }
  return directives;
}

/**
 * A pending file's directive; `undefined` when it is gone (claimed meanwhile). Content never changes once renamed
 * into place. A symlink, directory, FIFO or oversized file is a malformed entry (read without following or blocking).
 */
async function readPending(file: string, sessionId: string): Promise<ReturnType<typeof decode> | undefined> {
  try {
    return decode(await readRegularFile(file, MAX_QUEUE_FILE_BYTES), sessionId);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EUNSAFEPATH" || code === "EFBIG") return { ok: false, reason: (error as Error).message };
    throw error;
  }
}

/** A directive's text is at most 100 000 characters; its JSON envelope stays well under this. */
const MAX_QUEUE_FILE_BYTES = 512 * 1024;

/** The queue folder of a session; a symlink or non-folder at `queues/` or `queues/<id>` throws `UnsafePathError`. */
function checkedDir(paths: GovernancePaths, sessionId: string): string {
  const dir = queueDir(paths, sessionId);
  if (!dir.ok) throw new TypeError(dir.reason);
  checkRealDir(paths.queues);
  checkRealDir(dir.path);
  return dir.path;
}

async function pendingNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => PENDING.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/** Claims whose claimer is gone were never returned to anyone: rename them back (only one rename can win). */
async function requeueAbandonedClaims(dir: string, claimedDir: string): Promise<void> {
  let names: string[];
  try {
    checkRealDir(claimedDir);
    names = await readdir(claimedDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  for (const name of names) {
    const match = CLAIMED.exec(name);
    if (!match || isProcessAlive(Number(match[2]))) continue;
    await rename(join(claimedDir, name), join(dir, match[1]!)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
  await sweepTempFiles(dir);
}

function decode(text: string, sessionId: string): { ok: true; directive: Directive } | { ok: false; reason: string } {
  const json = parseJsonText(text);
  if (!json.ok) return json;
  const file = QueueFile.safeParse(json.value);
  if (!file.success) return { ok: false, reason: `invalid queue file: ${z.prettifyError(file.error)}` };
  if (file.data.sessionId !== sessionId) return { ok: false, reason: `queued for ${file.data.sessionId}, found in ${sessionId}'s queue` };
  const key = loadKey();
  if (!key.ok) return { ok: false, reason: `cannot verify the directive: ${key.reason}` };
  if (!verify(key.key, sessionId, file.data.directive, file.data.sig)) {
    return {
      ok: false,
      reason:
        file.data.sig === undefined
          ? "unsigned directive (not written by governance for this user); not delivered"
          : "directive signature does not match (forged or altered); not delivered",
    };
  }
  return { ok: true, directive: file.data.directive };
}

function report(options: ClaimOptions, problem: StoreProblem): void {
  try {
    options.onProblem?.(problem);
  } catch {
    // Reporting must not break delivery.
  }
}
