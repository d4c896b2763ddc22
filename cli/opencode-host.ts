import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { HOST_LINES, type HostLine, hostLineOf } from "../governance/host/host-lines.ts";
import { configCandidates, globalConfigDir, readOpencodeConfig } from "./opencode-config.ts";

export type DetectedHost = { line: HostLine; version: string | null; how: string };

/** `opencode --version` of the `opencode` on PATH (or `$OPENCODE_BIN`), or null when there is none. */
export function opencodeVersion(env: NodeJS.ProcessEnv): string | null {
  const bin = env.OPENCODE_BIN || "opencode";
  const run = spawnSync(bin, ["--version"], { env: { ...env, OPENCODE_DISABLE_AUTOUPDATE: "1" }, encoding: "utf8", timeout: 15_000 });
  if (run.status !== 0) return null;
  return /\d+\.\d+\.\d+[\w.-]*/.exec(run.stdout)?.[0] ?? null;
}

/**
 * Which OpenCode the user runs: `opencode --version` first (1.x = OpenCode 1; 2.x or a 0.0.0-beta/next build =
 * OpenCode 2); without a binary, the config files present say it (a `plugins` list or a `cli.json` = OpenCode 2, a
 * `plugin` list or a `tui.json` = OpenCode 1); else OpenCode 1, said as a guess.
 */
export function detectHost(dir: string, env: NodeJS.ProcessEnv): DetectedHost {
  const version = opencodeVersion(env);
  const line = version ? hostLineOf(version) : undefined;
  if (version && line) return { line, version, how: `opencode --version says ${version}` };
  const files = [...configCandidates("project", dir, env), ...configCandidates("global", dir, env)].filter((f) => fs.existsSync(f));
  for (const file of files) {
    const read = readOpencodeConfig(file);
    if (!read.ok) continue;
    if (read.value.plugins !== undefined) return { line: 2, version: null, how: `${file} has a "plugins" list (OpenCode 2)` };
    if (read.value.plugin !== undefined) return { line: 1, version: null, how: `${file} has a "plugin" list (OpenCode 1)` };
  }
  const global = globalConfigDir(env);
  if (fs.existsSync(path.join(global, "cli.json"))) return { line: 2, version: null, how: `${path.join(global, "cli.json")} exists (OpenCode 2's TUI config)` };
  if (fs.existsSync(path.join(global, "tui.json"))) return { line: 1, version: null, how: `${path.join(global, "tui.json")} exists (OpenCode 1's TUI config)` };
  return { line: 1, version: null, how: "no opencode binary or config found: assuming OpenCode 1" };
}

export function pluginKeyOf(line: HostLine): "plugin" | "plugins" {
  return HOST_LINES[line].pluginKey;
}
