/**
 * `npm run test:compat`: the OpenCode 1 version matrix. Each release is installed from the npm registry into a cache
 * outside the repository (~/.cache/opencode-governance/compat/opencode-ai-<version>, under /tmp/npm.lock), then the
 * smoke scenario (test/compat/host-smoke.test.ts) runs on its real binary (OPENCODE_BIN, under /tmp/e2e.lock).
 * Prints which versions work. Not part of `npm test`. `COMPAT_VERSIONS=1.18.33,1.17.11` narrows the list.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { OLDEST_SUPPORTED_V1 } from "../governance/host/host-lines.ts";
import { REPO_ROOT } from "../test/harness/paths.ts";

const VERSIONS = (process.env.COMPAT_VERSIONS ?? "1.15.13,1.17.11,1.18.3,1.18.33").split(",").map((v) => v.trim());
const CACHE = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "opencode-governance", "compat");

type Row = { version: string; install: string; smoke: string; seconds: number };

function install(version: string): { bin?: string; problem?: string } {
  const dir = path.join(CACHE, `opencode-ai-${version}`);
  const bin = path.join(dir, "node_modules", ".bin", "opencode");
  const works = () => spawnSync(bin, ["--version"], { timeout: 30_000 }).status === 0;
  if (fs.existsSync(bin) && works()) return { bin };
  fs.mkdirSync(dir, { recursive: true });
  const npm = spawnSync(
    "flock",
    ["/tmp/npm.lock", "npm", "install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `opencode-ai@${version}`],
    { encoding: "utf8", timeout: 600_000 },
  );
  if (npm.status !== 0) return { problem: `npm install failed: ${(npm.stderr || npm.stdout).trim().split("\n").at(-1)}` };
  if (!works()) {
    // npm may skip install scripts; opencode-ai's postinstall links the platform binary.
    spawnSync(process.execPath, [path.join(dir, "node_modules", "opencode-ai", "postinstall.mjs")], { cwd: path.join(dir, "node_modules", "opencode-ai") });
  }
  return works() ? { bin } : { problem: "binary does not start (no platform package for this machine?)" };
}

function smoke(bin: string): { ok: boolean; detail: string } {
  const run = spawnSync("flock", ["/tmp/e2e.lock", "npx", "vitest", "run", "--config", "vitest.compat.config.ts"], {
    cwd: REPO_ROOT,
    env: { ...process.env, OPENCODE_BIN: bin },
    encoding: "utf8",
    // Includes the wait for the shared e2e lock; vitest's own timeouts bound the run itself.
    timeout: 3_600_000,
  });
  const out = `${run.stdout}\n${run.stderr}`;
  const failure = /AssertionError[^\n]*|Error: [^\n]*/.exec(out)?.[0]?.replace(/\x1b\[[0-9;]*m/g, "");
  return run.status === 0 ? { ok: true, detail: "passed" } : { ok: false, detail: `failed: ${failure?.slice(0, 120) ?? `exit ${run.status}`}` };
}

const rows: Row[] = [];
for (const version of VERSIONS) {
  const began = Date.now();
  const got = install(version);
  if (!got.bin) {
    rows.push({ version, install: got.problem ?? "failed", smoke: "not run", seconds: 0 });
    continue;
  }
  const result = smoke(got.bin);
  rows.push({ version, install: "ok", smoke: result.detail, seconds: Math.round((Date.now() - began) / 1000) });
  console.log(`opencode-ai ${version}: ${result.detail}`);
}

const head = ["opencode-ai", "install", "smoke (plugin starts, host recorded, prefix on every step)", "s"];
const table = [head, ...rows.map((r) => [r.version, r.install, r.smoke, String(r.seconds)])];
const widths = head.map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length)));
console.log(`\nOpenCode 1 compatibility (oldest supported: ${OLDEST_SUPPORTED_V1}; cache ${CACHE})`);
for (const [i, r] of table.entries()) {
  console.log(`| ${r.map((c, j) => c.padEnd(widths[j] ?? 0)).join(" | ")} |`);
  if (i === 0) console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
}
process.exitCode = rows.every((r) => r.smoke === "passed") ? 0 : 1;
