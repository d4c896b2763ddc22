import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ARCHIVE_RETENTION_MS, pruneArchive } from "../../../governance/storage/archive-retention.ts";
import { governancePaths } from "../../../governance/storage/governance-paths.ts";

const DAY = 24 * 3_600_000;
let root: string | undefined;
afterEach(() => root && rmSync(root, { recursive: true, force: true }));

describe("archived records are kept 30 days", () => {
  it("deletes only archived records unchanged for longer; never a symlink's target, nothing else in the folder", async () => {
    root = mkdtempSync(join(tmpdir(), "gov-archive-"));
    const paths = governancePaths(root);
    mkdirSync(paths.archive, { recursive: true });
    const now = Date.now();
    const put = (name: string, ageMs: number) => {
      const file = join(paths.archive, name);
      writeFileSync(file, "{}");
      utimesSync(file, new Date(now - ageMs), new Date(now - ageMs));
      return file;
    };
    const old = put("ses_old0000000000000000000001.json", ARCHIVE_RETENTION_MS + DAY);
    const recent = put("ses_new0000000000000000000001.json", ARCHIVE_RETENTION_MS - DAY);
    const notes = put("notes.txt", 90 * DAY);
    const victim = join(root, "victim.json");
    writeFileSync(victim, "keep");
    symlinkSync(victim, join(paths.archive, "ses_link000000000000000000001.json"));
    expect(await pruneArchive(paths, now)).toBe(1);
    expect([existsSync(old), existsSync(recent), existsSync(notes), existsSync(victim)]).toEqual([false, true, true, true]);
    expect(await pruneArchive(governancePaths(join(root, "none")), now)).toBe(0);
  });
});
