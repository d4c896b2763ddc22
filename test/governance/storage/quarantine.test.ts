import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClock } from "../../../governance/time/clock.ts";
import { ensureGovernanceDir, governancePaths } from "../../../governance/storage/governance-paths.ts";
import { parseJsonText, quarantineFile } from "../../../governance/storage/quarantine.ts";
import { tempDirEach } from "../helpers.ts";

describe("quarantineFile", () => {
  let dir: string;
  tempDirEach((d) => (dir = d));

  it("moves the bytes untouched and writes a reason file beside them", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    const bad = join(paths.sessions, "ses_abcdefgh.json");
    await writeFile(bad, "\u0000garbage");
    const result = await quarantineFile(paths, bad, "because", createFakeClock(123));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(await readFile(result.movedTo, "utf8")).toBe("\u0000garbage");
    expect(JSON.parse(await readFile(`${result.movedTo}.reason.json`, "utf8"))).toMatchObject({
      schemaVersion: 1,
      reason: "because",
      quarantinedAt: 123,
      originalPath: bad,
    });
    expect(await readdir(paths.sessions)).toEqual([]);
    expect(result.problem).toEqual({ kind: "quarantined", file: bad, movedTo: result.movedTo, reason: "because", at: 123 });
  });

  it("says `gone` when another process got there first", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    const result = await quarantineFile(paths, join(paths.sessions, "ses_missing1.json"), "x", createFakeClock(1));
    expect(result).toMatchObject({ ok: false, gone: true });
  });
});

describe("parseJsonText", () => {
  it.each([
    ["", /empty/],
    ["  \n", /empty/],
    ["\u0000\u0000", /NUL/],
    ['{"a":1', /invalid JSON/],
  ])("rejects %j", (text, reason) => {
    const result = parseJsonText(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it("parses JSON", () => {
    expect(parseJsonText('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });
});
