import { execFileSync } from "node:child_process";
import { defineConfig } from "vitest/config";

/**
 * `OPENCODE_BIN` pointing at an OpenCode 2 binary: only the files that drive OpenCode through `opencode run` apply
 * (the others use OpenCode 1's HTTP API, which OpenCode 2 replaced); the rest is listed as skipped, not failed.
 */
function opencode2Only(): string[] | undefined {
  const bin = process.env.OPENCODE_BIN;
  if (!bin) return undefined;
  let version = "";
  try {
    version = execFileSync(bin, ["--version"], { stdio: "pipe", timeout: 30_000 }).toString().trim();
  } catch {
    return undefined;
  }
  if (!/^(?:[2-9]\d*\.|0\.0\.0-(?:beta|next))/.test(version)) return undefined;
  // The OpenCode 2 files only: test/e2e/governance-prefix.test.ts scripts OpenCode 1's `bash` (2.0.15 answers "No tool
  // named \"bash\"") and its claim, the prefix on every step, is opencode-2-host.test.ts's on OpenCode 2.
  const files = ["test/e2e/opencode-2-*.test.ts", "test/host-contract/**/*.test.ts"];
  console.log(`OpenCode ${version} (OpenCode 2) at ${bin}: running ${files.join(", ")}; every other file is skipped (OpenCode 1 HTTP API).`);
  return files;
}

const v2 = opencode2Only();

/** Runs alone after everything else: 20 OpenCode sessions at once would slow every other end-to-end file, and be slowed. */
const LOAD = ["test/load/**/*.test.ts"];

export default defineConfig({
  test: {
    // test/compat/ is `npm run test:compat` (real binaries of several OpenCode releases), not part of `npm test`.
    exclude: ["**/node_modules/**", "test/compat/**"],
    // End-to-end tests start real opencode processes; each file gets its own fork and generous timeouts (a test's
    // waits end at the awaited event, so only a hang reaches a limit; two files at once make a slow step slower).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at a time, whatever the core count (vitest's default is cores - 1: ONE on a 2-core CI machine). An
    // end-to-end file keeps about one core busy (the real opencode, the CLI, the scripted model), so two fill a 2-core
    // machine; more only make every file slower and its waits longer (docs/decisions/0048-two-test-files-at-once.md).
    // `VITEST_MAX_WORKERS=1 npm test` runs them one at a time (vitest's own variable; `--maxWorkers` does not reach the
    // projects, which inherit this value).
    maxWorkers: 2,
    globalSetup: ["test/harness/global-setup.ts"],
    projects: [
      { extends: true as const, test: { name: "suite", include: v2 ?? ["test/**/*.test.ts"], exclude: ["**/node_modules/**", "test/compat/**", ...LOAD] } },
      ...(v2 ? [] : [{ extends: true as const, test: { name: "load", include: LOAD, maxWorkers: 1, sequence: { groupOrder: 1 } } }]),
    ],
  },
});
