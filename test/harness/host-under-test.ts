import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { hostLineOf } from "../../governance/host/host-lines.ts";
import { opencode2 } from "./opencode-2-binary.ts";
import { DEFAULT_OPENCODE_BIN, OPENCODE_BIN, REPO_ROOT } from "./paths.ts";

export type HostUnderTest = { bin: string; version: string; line: 1 | 2 | undefined };

let cached: HostUnderTest | undefined;

/** Which OpenCode the suite drives: `opencode --version` of OPENCODE_BIN (the pinned dev dependency by default). */
export function hostUnderTest(): HostUnderTest {
  if (cached) return cached;
  if (OPENCODE_BIN === DEFAULT_OPENCODE_BIN) {
    // The pinned dev dependency: its package says the version (`--version` would cost a second OpenCode start).
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "node_modules", "opencode-ai", "package.json"), "utf8")) as { version: string };
    cached = { bin: OPENCODE_BIN, version, line: hostLineOf(version) };
    return cached;
  }
  let version = "unknown";
  try {
    version = execFileSync(OPENCODE_BIN, ["--version"], { stdio: "pipe", timeout: 30_000, env: { ...process.env, OPENCODE_DISABLE_AUTOUPDATE: "1" } })
      .toString()
      .trim();
  } catch {
    // ensureOpencodeBinary (global setup) reports a binary that does not start.
  }
  cached = { bin: OPENCODE_BIN, version, line: hostLineOf(version) };
  return cached;
}

/**
 * The OpenCode 2 the suite runs beside OpenCode 1 (issue 40): `OPENCODE_BIN` when it names an OpenCode 2, else the
 * released 2.0.15 the test prerequisites installed (test/harness/opencode-2-binary.ts); `reason` when there is none.
 */
export function opencode2Host(): { ok: true; host: HostUnderTest } | { ok: false; reason: string } {
  const chosen = hostUnderTest();
  if (chosen.line === 2) return { ok: true, host: chosen };
  const installed = opencode2();
  if (!installed.ok) return installed;
  return { ok: true, host: { bin: installed.bin, version: installed.version, line: 2 } };
}

/**
 * The host's config, translated from the OpenCode 1 shape the tests write: OpenCode 2 lists plugins under `plugins`
 * (OpenCode 1: `plugin`) and needs its own subagent depth raised (`experimental.subagent_depth`; OpenCode 1's is
 * raised by the plugin's `config` hook, which OpenCode 2 does not have — `init` writes it for OpenCode 2 users).
 */
export function configForHost(config: Record<string, unknown>, line: 1 | 2 | undefined, maxDepth = 3): Record<string, unknown> {
  if (line !== 2) return config;
  const { plugin, ...rest } = config;
  const experimental = { subagent_depth: maxDepth + 1, ...((rest.experimental as Record<string, unknown> | undefined) ?? {}) };
  return { ...rest, ...(plugin !== undefined ? { plugins: plugin } : {}), experimental };
}
