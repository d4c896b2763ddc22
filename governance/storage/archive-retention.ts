import { lstat, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { GovernancePaths } from "./governance-paths.ts";

/**
 * How long an archived record (a session idle > 48 h, moved to `archive/`) is kept: 30 days. Archived records are
 * never resumed (seed 003 S5: past 48 h a session starts fresh); they are kept for a user who wants to look back,
 * and must not grow without bound in a project used for years.
 */
export const ARCHIVE_RETENTION_MS = 30 * 24 * 3_600_000;

/** Deletes archived records not changed for `retentionMs` (file mtime: the record's last write, kept by the move). Returns how many. */
export async function pruneArchive(paths: GovernancePaths, now: number, retentionMs = ARCHIVE_RETENTION_MS, until?: () => boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(paths.archive);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (until?.()) break;
    if (!name.endsWith(".json")) continue;
    const file = join(paths.archive, name);
    const st = await lstat(file).catch(() => undefined);
    if (!st?.isFile() || now - st.mtimeMs <= retentionMs) continue;
    if (
      await unlink(file).then(
        () => true,
        () => false,
      )
    )
      removed++;
  }
  return removed;
}
