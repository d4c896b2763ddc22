import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * The unit tests stand where the code they test stands (issue 42): test/plugin/<folder>/ tests plugin/<folder>/ and
 * test/governance/<folder>/ tests governance/<folder>/, so a reader finds a file's tests by its path. test/plugin/ once
 * kept a host/ folder for a plugin/host/ that had been split into opencode-1/ and opencode-2/. Tests of the whole
 * plugin (the lifecycle model, the long-lived soak, the seed scenarios: they drive it through OpenCode 1's adapter)
 * stand at test/plugin/'s root; fixtures/ holds the data both kinds share.
 */

const SHARED = new Set(["fixtures"]);

const folders = (dir: string) =>
  readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name);

describe("test folders mirror the source folders", () => {
  for (const source of ["plugin", "governance"]) {
    it(`every folder of test/${source}/ names a folder of ${source}/ (or is a shared one: ${[...SHARED].join(", ")})`, () => {
      const real = new Set(folders(source));
      expect(folders(join("test", source)).filter((f) => !real.has(f) && !SHARED.has(f))).toEqual([]);
    });
  }
});
