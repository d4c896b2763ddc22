import { lstat, rename, rm } from "node:fs/promises";
import * as z from "../zod.ts";
import type { Clock } from "../time/clock.ts";
import { withFileLock } from "./file-lock.ts";
import { ensureGovernanceDir, type GovernancePaths } from "./governance-paths.ts";
import type { StoreProblem } from "./quarantine.ts";
import { MAX_STATE_FILE_BYTES, openForAppend, readRegularFile } from "./safe-fs.ts";

export const AuditEventType = z.enum([
  "plugin_started",
  "session_created",
  "state_transition",
  "session_resumed",
  "stop_queued",
  "session_aborted",
  "session_compacted",
  "delegation_blocked",
  "emergency_halt",
  "child_linked",
  "child_closed",
  "session_stop_requested",
  "stop_escalated",
  "stop_level_delivered",
  "session_stopped",
  "session_hard_stopped",
  "stop_failed",
  "session_injected",
  "parent_notified",
  "orphan_closed",
  "config_problem",
  "config_loaded",
  "config_agents_named",
  "policy_ceiling",
  "store_problem",
  "hook_error",
  "host_limit_raised",
  "illegal_transition",
  "compaction_context_added",
  "descendants_interrupted",
  "descendant_aborted",
  "session_expired",
  "session_error",
  "phase_changed",
  "first_action_missed",
  "state_stale",
  "resume_context_skipped",
  "inject_queued",
  "inject_dropped",
  "tool_blocked",
  "stop_ignored",
  "steer_refused",
  "directive_rejected",
  "host_detected",
  "host_unsupported",
  "host_notice",
  "governance_gap",
  "session_ended",
  "session_rehosted",
  "session_released",
  "note_dropped",
  "maintenance_swept",
  "budget_warning",
  "budget_exceeded",
  "budget_raised",
  "budget_cost_unreported",
  "budget_resumed",
  "spawn_refused_concurrency",
  "spawn_refused_budget",
  "loop_detected",
  "telemetry_started",
  "telemetry_stopped",
  "telemetry_export_failed",
  "control_refused",
  "record_tampered",
  "stop_covered",
  "ceiling_kept",
  "directive_replayed",
  "key_redacted",
  "resume_offered",
  "confinement_unavailable",
  "hook_failed",
]);
export type AuditEventType = z.infer<typeof AuditEventType>;
// Renamed types (old lines keep their names; readers match both): audit-names.ts.

/** One parsed line. `type` stays a string on read so lines written by a newer build are still shown. */
export const AuditEvent = z.looseObject({ at: z.number(), type: z.string(), sessionId: z.string().optional() });
export type AuditEvent = z.infer<typeof AuditEvent>;

export type AppendResult = { ok: true } | { ok: false; reason: string };

export interface AuditLogOptions {
  paths: GovernancePaths;
  clock: Clock;
  /** Rotate once `audit.log` grows past this. Default 1 MiB. */
  maxBytes?: number;
  /** Rotated files kept (`audit.log.1` newest … `audit.log.<keep>` oldest). Default 3. */
  keep?: number;
  /** I/O failures land here instead of in the caller. Must not throw. */
  onProblem?: (problem: StoreProblem) => void;
}

/** Lines larger than this are refused: one `write` of a bounded line is what keeps concurrent appenders from interleaving. */
export const MAX_LINE_BYTES = 64 * 1024;
const LINE_START = '{"at":';

/**
 * Append-only JSON-lines log shared by every process of a project. Each event is one `write` on an `O_APPEND`
 * descriptor, which the kernel positions atomically, so lines from several processes never interleave and no lock
 * is taken on the hot path. The file is opened with `O_NOFOLLOW` and must be a regular, singly linked file created
 * owner-only: a planted symlink or hard link (say to a shell start-up file) is refused and reported, never written. Only rotation (a rare rename cascade) takes the file lock. A crash can at worst leave a
 * torn last line, which {@link AuditLog.read} skips and which cannot swallow the next line.
 */
export class AuditLog {
  readonly #paths: GovernancePaths;
  readonly #clock: Clock;
  readonly #maxBytes: number;
  readonly #keep: number;
  readonly #onProblem: (problem: StoreProblem) => void;

  constructor(options: AuditLogOptions) {
    this.#paths = options.paths;
    this.#clock = options.clock;
    this.#maxBytes = options.maxBytes ?? 1024 * 1024;
    this.#keep = Math.max(1, options.keep ?? 3);
    const onProblem = options.onProblem;
    this.#onProblem = (problem) => {
      try {
        onProblem?.(problem);
      } catch {
        // Reporting must never break auditing's callers.
      }
    };
  }

  /** The size at which `audit.log` is rotated. */
  get maxBytes(): number {
    return this.#maxBytes;
  }

  /** Appends `{"at", "type", ...data}` as one line. Never throws; failures are returned and reported. */
  async append(type: AuditEventType | (string & {}), data: Record<string, unknown> & { sessionId?: string } = {}): Promise<AppendResult> {
    const file = this.#paths.auditLog;
    try {
      const { at: _at, type: _type, ...rest } = data;
      const line = Buffer.from(`${JSON.stringify({ at: this.#clock.now(), type, ...rest })}\n`, "utf8");
      if (line.length > MAX_LINE_BYTES) return this.#fail(file, `audit line of ${line.length} bytes exceeds ${MAX_LINE_BYTES}`);
      await ensureGovernanceDir(this.#paths);
      const handle = await openForAppend(file);
      let size: number;
      try {
        // A line torn by an earlier failure (ENOSPC, kill) is closed first so it cannot glue onto this one.
        const before = (await handle.stat()).size;
        const last = Buffer.alloc(1);
        const torn = before > 0 && (await handle.read(last, 0, 1, before - 1)).bytesRead === 1 && last[0] !== 0x0a;
        const bytes = torn ? Buffer.concat([Buffer.from("\n"), line]) : line;
        const { bytesWritten } = await handle.write(bytes, 0, bytes.length);
        if (bytesWritten !== bytes.length) return this.#fail(file, `short write (${bytesWritten}/${bytes.length} bytes)`);
        size = (await handle.stat()).size;
      } finally {
        await handle.close();
      }
      if (size > this.#maxBytes) await withFileLock(file, () => this.#rotateIfNeeded());
      return { ok: true };
    } catch (error) {
      return this.#fail(file, `audit append failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Parsed events, oldest first. Lines that do not parse (a torn write after a crash) are skipped; a fragment glued
   * to the front of a later line is cut off so that line is kept. `includeRotated` also reads `audit.log.<keep>…1`.
   * A symlink or special file in place of a log file is skipped and reported, never followed.
   */
  async read(options: { includeRotated?: boolean } = {}): Promise<AuditEvent[]> {
    const files = options.includeRotated ? [...this.rotatedFiles().reverse(), this.#paths.auditLog] : [this.#paths.auditLog];
    const events: AuditEvent[] = [];
    for (const file of files) {
      const text = await readRegularFile(file, Math.max(2 * this.#maxBytes + MAX_LINE_BYTES, MAX_STATE_FILE_BYTES)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return "";
        // A planted symlink or special file is never read; reported, and the other files still are.
        if (error.code === "EUNSAFEPATH" || error.code === "EFBIG") {
          this.#fail(file, error.message);
          return "";
        }
        throw error;
      });
      for (const line of text.split("\n")) {
        const event = parseLine(line);
        if (event) events.push(event);
      }
    }
    return events;
  }

  /** `audit.log.1` (newest) … `audit.log.<keep>` (oldest), whether or not they exist. */
  rotatedFiles(): string[] {
    return Array.from({ length: this.#keep }, (_, i) => `${this.#paths.auditLog}.${i + 1}`);
  }

  async #rotateIfNeeded(): Promise<void> {
    const current = await lstat(this.#paths.auditLog).catch(() => undefined);
    if (!current || current.size <= this.#maxBytes) return;
    const rotated = this.rotatedFiles();
    await rm(rotated[rotated.length - 1]!, { force: true });
    for (let i = rotated.length - 1; i > 0; i--) {
      await rename(rotated[i - 1]!, rotated[i]!).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
    await rename(this.#paths.auditLog, rotated[0]!);
  }

  #fail(file: string, reason: string): AppendResult {
    this.#onProblem({ kind: "io_error", file, reason, at: this.#clock.now() });
    return { ok: false, reason };
  }
}

function parseLine(line: string): AuditEvent | undefined {
  if (line.trim() === "") return undefined;
  const direct = tryParse(line);
  if (direct) return direct;
  for (let i = line.indexOf(LINE_START, 1); i > 0; i = line.indexOf(LINE_START, i + 1)) {
    const event = tryParse(line.slice(i));
    if (event) return event;
  }
  return undefined;
}

function tryParse(text: string): AuditEvent | undefined {
  try {
    const parsed = AuditEvent.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
