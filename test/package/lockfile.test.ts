import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { fillPlatforms, type Lockfile, missingOptionals, opencodePlatform } from "../../scripts/lock-platforms.ts";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * `npm ci` — what CI and a contributor on any platform run — refuses a lock in which a locked package's optional
 * dependency has no entry of its own ("Missing: opencode-darwin-arm64@ from lock file"). The committed lock must carry
 * every platform's (docs/decisions/0022-lock-every-platform.md).
 */
const committed = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8")) as Lockfile;

const lock = (packages: Lockfile["packages"]): Lockfile => ({ name: "x", lockfileVersion: 3, packages: { "": { version: "1.0.0" }, ...packages } });

describe("package-lock.json", () => {
  test("every optional dependency of every locked package has its own entry (npm ci accepts the lock)", () => {
    expect(missingOptionals(committed)).toEqual([]);
  });

  test("the OpenCode binary of each platform is locked at the version opencode-ai names, marked with its os and cpu", () => {
    const wants = committed.packages["node_modules/opencode-ai"]?.optionalDependencies ?? {};
    expect(Object.keys(wants).length).toBeGreaterThanOrEqual(12);
    for (const [name, version] of Object.entries(wants)) {
      const entry = committed.packages[`node_modules/${name}`];
      expect(entry?.version, name).toBe(version);
      expect(entry?.optional, name).toBe(true);
      expect({ os: entry?.os, cpu: entry?.cpu }, name).toEqual(opencodePlatform(name));
    }
  });
});

describe("lock-platforms (npm run lock:platforms)", () => {
  const opencodeAi = {
    version: "1.18.33",
    dev: true,
    optionalDependencies: { "opencode-linux-x64": "1.18.33", "opencode-windows-x64-baseline": "1.18.33", "opencode-linux-arm64-musl": "1.18.33" },
  };

  test("derives os and cpu from OpenCode's platform names (windows is npm's win32; baseline and musl keep the arch)", () => {
    expect(opencodePlatform("opencode-windows-x64-baseline")).toEqual({ os: ["win32"], cpu: ["x64"] });
    expect(opencodePlatform("opencode-linux-arm64-musl")).toEqual({ os: ["linux"], cpu: ["arm64"] });
    expect(opencodePlatform("opencode-darwin-x64-baseline")).toEqual({ os: ["darwin"], cpu: ["x64"] });
    expect(opencodePlatform("opencode-ai")).toBeUndefined();
    expect(opencodePlatform("@biomejs/cli-darwin-arm64")).toBeUndefined();
  });

  test("adds the missing platform entries, leaves the present ones, and the result has nothing missing", () => {
    const present = { version: "1.18.33", integrity: "sha512-x", cpu: ["x64"], dev: true, optional: true, os: ["linux"] };
    const { lock: filled, added, unknown } = fillPlatforms(lock({ "node_modules/opencode-ai": opencodeAi, "node_modules/opencode-linux-x64": present }));
    expect(added).toEqual(["opencode-windows-x64-baseline@1.18.33", "opencode-linux-arm64-musl@1.18.33"]);
    expect(unknown).toEqual([]);
    expect(filled.packages["node_modules/opencode-linux-x64"]).toBe(present);
    expect(filled.packages["node_modules/opencode-windows-x64-baseline"]).toEqual({
      version: "1.18.33",
      cpu: ["x64"],
      dev: true,
      optional: true,
      os: ["win32"],
    });
    expect(missingOptionals(filled)).toEqual([]);
    expect(Object.keys(filled.packages)).toEqual([
      "",
      "node_modules/opencode-ai",
      "node_modules/opencode-linux-arm64-musl",
      "node_modules/opencode-linux-x64",
      "node_modules/opencode-windows-x64-baseline",
    ]);
    expect(fillPlatforms(filled).added).toEqual([]);
  });

  test("reports any other missing optional package instead of inventing its platform", () => {
    const { added, unknown } = fillPlatforms(
      lock({ "node_modules/@biomejs/biome": { version: "2.6.8", optionalDependencies: { "@biomejs/cli-darwin-arm64": "2.6.8" } } }),
    );
    expect(added).toEqual([]);
    expect(unknown).toEqual([{ name: "@biomejs/cli-darwin-arm64", version: "2.6.8", requiredBy: "node_modules/@biomejs/biome", dev: false }]);
  });

  test("finds an optional dependency where npm does: nested under its dependant, or hoisted to an ancestor", () => {
    const nested = lock({
      "node_modules/a": { version: "1.0.0", optionalDependencies: { b: "1.0.0" } },
      "node_modules/a/node_modules/b": { version: "1.0.0" },
      "node_modules/c/node_modules/d": { version: "1.0.0", optionalDependencies: { e: "1.0.0" } },
      "node_modules/c/node_modules/e": { version: "1.0.0" },
      "node_modules/c": { version: "1.0.0" },
      "node_modules/f": { version: "1.0.0", optionalDependencies: { g: "1.0.0" } },
    });
    expect(missingOptionals(nested)).toEqual([{ name: "g", version: "1.0.0", requiredBy: "node_modules/f", dev: false }]);
  });
});
