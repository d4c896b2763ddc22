import { existsSync } from "node:fs";
import { lstat, readdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { sweepTempFiles, writeFileAtomic } from "../storage/atomic-write.ts";
import type { Clock } from "../time/clock.ts";
import { withFileLock, type FileLockOptions } from "../storage/file-lock.ts";
import { ensureGovernanceDir, governancePaths, sessionFilePath, type GovernancePaths } from "../storage/governance-paths.ts";
import { parseJsonText, quarantineFile, type StoreProblem } from "../storage/quarantine.ts";
import { migrateRecord } from "./record-migrations.ts";
import { CURRENT_SCHEMA_VERSION, SessionRecord } from "./session-record.ts";
import { checkRealDir, isFatalFsError, readRegularFile, type UnsafePathError } from "../storage/safe-fs.ts";

export interface SessionStoreOptions {
  projectDir: string;
  clock: Clock;
  /** Called once per file that was set aside or could not be touched. Must not throw. */
  onProblem?: (problem: StoreProblem) => void;
  /** Cross-process lock tuning; the defaults suit production (see `FileLock.withFileLock`). */
  lock?: Omit<FileLockOptions, "onCompromised">;
}

/** A record updater. It must not mutate `current` (records are deeply frozen) and returns `undefined` or `current` to skip the write. */
export type RecordUpdater = (current: SessionRecord | undefined) => SessionRecord | undefined;

/** `newer`: written by a newer build; left in place and never overwritten by this one. */
export type Loaded = { kind: "missing" } | { kind: "ok"; record: SessionRecord } | { kind: "bad"; reason: string } | { kind: "newer"; reason: string };

const RECORD_FILE = /^(ses_[A-Za-z0-9]+)\.json$/;

/**
 * How long a record's lock may be seen held by one holder before a waiter takes it over, refreshed or not (issue 27:
 * a process of the user kept a session's lock fresh for 45 s and froze a user's stop). A genuine holder that slow
 * (a frozen process) loses at most that one update, reported as a compromised lock.
 */
export const RECORD_LOCK_MAX_HOLD_MS = 3_000;

/**
 * One JSON file per session under `sessions/`; the files are the truth (no index, nothing to rebuild on restart).
 * Every write is a read-modify-write under a cross-process lock followed by an atomic rename, so concurrent
 * processes never lose an update and a crash never leaves a torn record. A file that cannot be decoded is moved to
 * `quarantine/` with a reason and reported once; it never takes other records down and is never overwritten in place.
 */
export class SessionStore {
  readonly paths: GovernancePaths;
  readonly #clock: Clock;
  readonly #onProblem: (problem: StoreProblem) => void;
  readonly #lock: FileLockOptions;
  readonly #cache = new Map<string, SessionRecord>();
  /**
   * The record file this instance last wrote, per session: the file's identity right after the write (under the
   * lock) and the record it holds. A read that finds the file still that file (same device, inode, links, size, mtime
   * and ctime — a rename, rewrite, link or chmod by anyone changes the ctime, which no user can set back) reuses the
   * record instead of reading, parsing and migrating it again: the write-behind of a busy session re-reads its own
   * last write every second (issue 31).
   */
  readonly #written = new Map<string, { stamp: string; record: SessionRecord }>();
  /** Record files of a newer build seen by this instance: reported once, never quarantined or overwritten. */
  readonly #newer = new Set<string>();
  #swept: Promise<unknown> | undefined;

  constructor(options: SessionStoreOptions) {
    this.paths = governancePaths(options.projectDir);
    this.#clock = options.clock;
    const onProblem = options.onProblem;
    this.#onProblem = (problem) => {
      try {
        onProblem?.(problem);
      } catch {
        // A reporting failure must not turn into a storage failure.
      }
    };
    this.#lock = {
      // A record's read-modify-write takes milliseconds: a lock held longer than this is someone blocking governance.
      maxHoldMs: RECORD_LOCK_MAX_HOLD_MS,
      ...options.lock,
      onCompromised: (error) =>
        this.#onProblem({ kind: "io_error", file: this.paths.sessions, reason: `lock compromised: ${error.message}`, at: this.#clock.now() }),
    };
  }

  /** The last record this instance read or wrote for `id`, without I/O. May lag behind other processes. */
  peek(id: string): SessionRecord | undefined {
    return this.#cache.get(id);
  }

  /** Drops the cached record (the process no longer needs it without I/O); the file is untouched. */
  forget(id: string): void {
    this.#cache.delete(id);
    this.#written.delete(id);
  }

  cacheSize(): number {
    return this.#cache.size;
  }

  /** The record on disk, migrated to the current schema; `undefined` if absent, quarantined, or `id` is not a session id. */
  async read(id: string): Promise<SessionRecord | undefined> {
    const file = sessionFilePath(this.paths, id);
    if (!file.ok) return undefined;
    await this.#prepareForRead();
    return this.#loadOrQuarantine(id, file.path, false);
  }

  /**
   * Applies `fn` to the freshest record under the cross-process lock and writes the result atomically.
   * Returns the stored record (or the unchanged one when the write was skipped). Throws on an invalid id, on a
   * result that fails the schema or names another session (caller bugs), and on I/O errors.
   */
  async update(id: string, fn: RecordUpdater, opts: { hosted?: boolean } = {}): Promise<SessionRecord | undefined> {
    const file = sessionFilePath(this.paths, id);
    if (!file.ok) throw new TypeError(file.reason);
    await this.#prepare();
    return withFileLock(
      file.path,
      async () => {
        let current = await this.#loadOrQuarantine(id, file.path, true);
        if (this.#newer.has(file.path)) {
          // A session this process runs has no record a newer build wrote: its host would be that build. The file is
          // someone's rewrite (issue 41: `schemaVersion: 3` took a session out of governance); kept aside, not obeyed.
          if (!opts.hosted) throw new Error(`${file.path} was written by a newer opencode-governance; not overwriting it`);
          this.#newer.delete(file.path);
          await this.#quarantine(file.path, "a newer schemaVersion on a record this process hosts (not written by its host)");
          current = undefined;
        }
        const next = fn(current);
        if (next === undefined || next === current) return current;
        const record = deepFreeze(SessionRecord.parse(next));
        if (record.sessionId !== id) throw new Error(`updater for ${id} returned a record of ${record.sessionId}`);
        this.#written.delete(id);
        await writeFileAtomic(file.path, `${JSON.stringify(record, null, 2)}\n`);
        this.#cache.set(id, record);
        const stamp = await fileStamp(file.path);
        if (stamp) this.#written.set(id, { stamp, record });
        return record;
      },
      this.#lock,
    );
  }

  /**
   * Every readable record; unreadable ones are quarantined and reported, the rest still load. In a folder this
   * process may read but not write (root-owned after a `sudo opencode`), what can be read is still listed and each
   * failure is reported; only an unreadable or unsafe `sessions/` folder throws.
   */
  async list(): Promise<SessionRecord[]> {
    await this.#prepareForRead();
    checkRealDir(this.paths.sessions);
    const names = (await readdir(this.paths.sessions)).sort();
    const records: SessionRecord[] = [];
    for (const name of names) {
      const id = RECORD_FILE.exec(name)?.[1];
      if (!id) continue;
      const file = sessionFilePath(this.paths, id);
      if (!file.ok) continue;
      try {
        // Listing refreshes what is cached but caches nothing new: the cache holds the sessions this process works
        // with, not every record on disk (a long-lived process lists all of them periodically).
        const cached = this.#cache.has(id);
        const record = await this.#loadOrQuarantine(id, file.path, false);
        if (record && !cached) this.#cache.delete(id);
        if (record) records.push(record);
      } catch (error) {
        this.#report(file.path, error);
      }
    }
    return records;
  }

  /**
   * Moves (never deletes) records whose last update and last activity are both older than `maxAgeMs` to
   * `archive/`. Staleness is re-checked under the lock, so a session another process just touched stays.
   * Returns the archived ids. `until` ends the sweep early (the process is exiting); what is left waits for the next.
   */
  async archiveStale(maxAgeMs: number, opts: { until?: () => boolean; keep?: (sessionId: string) => boolean } = {}): Promise<string[]> {
    const cutoff = this.#clock.now() - maxAgeMs;
    const isStale = (record: SessionRecord) => Math.max(record.updatedAt, record.lastActivityAt) < cutoff;
    const archived: string[] = [];
    for (const candidate of await this.list()) {
      if (opts.until?.()) break;
      if (!isStale(candidate) || opts.keep?.(candidate.sessionId)) continue;
      const id = candidate.sessionId;
      const file = sessionFilePath(this.paths, id);
      if (!file.ok) continue;
      const moved = await withFileLock<boolean>(
        file.path,
        async () => {
          const fresh = await this.#loadOrQuarantine(id, file.path, true);
          if (!fresh || !isStale(fresh)) return false;
          let target = join(this.paths.archive, `${id}.json`);
          if (existsSync(target)) target = join(this.paths.archive, `${id}.${this.#clock.now()}.json`);
          await rename(file.path, target);
          return true;
        },
        this.#lock,
      ).catch((error: unknown) => {
        // One record that cannot be moved (read-only folder, full disk) is reported; the others still are.
        this.#report(file.path, error);
        return false;
      });
      if (moved) {
        this.#cache.delete(id);
        archived.push(id);
      }
    }
    return archived;
  }

  /**
   * Folder set-up is re-checked every call (a few lstats); dead writers' temp files are swept once per instance.
   * A failure (unsafe path, read-only folder) is reported through `onProblem`, then thrown.
   */
  async #prepare(): Promise<void> {
    try {
      await ensureGovernanceDir(this.paths);
    } catch (error) {
      this.#report((error as Partial<UnsafePathError>).path ?? this.paths.root, error);
      throw error;
    }
    this.#swept ??= sweepTempFiles(this.paths.sessions).catch(() => undefined);
    await this.#swept;
  }

  /** Reads go on when set-up fails for lack of permission or space (reported); an unsafe folder still stops them. */
  async #prepareForRead(): Promise<void> {
    try {
      await this.#prepare();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EUNSAFEPATH" || !isFatalFsError(error)) throw error;
    }
  }

  #report(file: string, error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    this.#onProblem({ kind: "io_error", file, reason, at: this.#clock.now() });
  }

  async #load(id: string, file: string): Promise<Loaded> {
    const written = this.#written.get(id);
    if (written) {
      if ((await fileStamp(file)) === written.stamp) return { kind: "ok", record: written.record };
      this.#written.delete(id);
    }
    let text: string;
    try {
      text = await readRegularFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return { kind: "missing" };
      if (code === "EUNSAFEPATH" || code === "EFBIG") return { kind: "bad", reason: (error as Error).message };
      throw error;
    }
    return decodeRecord(id, text);
  }

  /**
   * Loads a record, quarantining it if it cannot be decoded. Quarantine always happens under the lock with a
   * re-read, so a file another process fixed in the meantime is never moved aside. A newer build's record is
   * reported once and left where it is.
   */
  async #loadOrQuarantine(id: string, file: string, locked: boolean): Promise<SessionRecord | undefined> {
    let loaded = await this.#load(id, file);
    if (loaded.kind === "newer") {
      if (!this.#newer.has(file)) this.#onProblem({ kind: "io_error", file, reason: `left in place: ${loaded.reason}`, at: this.#clock.now() });
      this.#newer.add(file);
    } else this.#newer.delete(file);
    if (loaded.kind === "bad") {
      loaded = locked
        ? await this.#quarantineIfBad(file, loaded)
        : await withFileLock(file, async () => this.#quarantineIfBad(file, await this.#load(id, file)), this.#lock);
    }
    if (loaded.kind === "ok") {
      this.#cache.set(id, loaded.record);
      return loaded.record;
    }
    this.#cache.delete(id);
    this.#written.delete(id);
    return undefined;
  }

  async #quarantineIfBad(file: string, loaded: Loaded): Promise<Loaded> {
    if (loaded.kind !== "bad") return loaded;
    await this.#quarantine(file, loaded.reason);
    return { kind: "missing" };
  }

  async #quarantine(file: string, reason: string): Promise<void> {
    const result = await quarantineFile(this.paths, file, reason, this.#clock);
    if (result.ok) this.#onProblem(result.problem);
    else if (!result.gone) this.#onProblem({ kind: "io_error", file, reason: result.reason, at: this.#clock.now() });
  }
}

/** A record file's identity: `undefined` when it is missing, or is not a regular file (never followed: lstat). */
async function fileStamp(file: string): Promise<string | undefined> {
  const st = await lstat(file, { bigint: true }).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  return `${st.dev}:${st.ino}:${st.nlink}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Decodes the text of `sessions/<id>.json`. Never throws: any input is a typed result (checked by a property test).
 * A `schemaVersion` above this build's is `newer`, not `bad`, so an older CLI never pulls a newer plugin's live
 * record away.
 */
export function decodeRecord(id: string, text: string): Loaded {
  const json = parseJsonText(text);
  if (!json.ok) return { kind: "bad", reason: json.reason };
  const version = (json.value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (typeof version === "number" && Number.isInteger(version) && version > CURRENT_SCHEMA_VERSION) {
    return { kind: "newer", reason: `schemaVersion ${version} was written by a newer opencode-governance (this one reads up to ${CURRENT_SCHEMA_VERSION})` };
  }
  const migrated = migrateRecord(json.value);
  if (!migrated.ok) return { kind: "bad", reason: migrated.reason };
  if (migrated.record.sessionId !== id) {
    return { kind: "bad", reason: `file name says ${id} but the record is ${migrated.record.sessionId}` };
  }
  return { kind: "ok", record: deepFreeze(migrated.record) };
}
