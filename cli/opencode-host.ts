import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { HOST_LINES, type HostLine, hostLineOf, OLDEST_SUPPORTED_V1 } from "../governance/host/host-lines.ts";
import { configCandidates, globalConfigDir, readOpencodeConfig } from "./opencode-config.ts";

/** `binaryMissing`: no `opencode` runs here, so the line is a guess from config files (doctor warns). */
export type DetectedHost = { line: HostLine; version: string | null; how: string; binaryMissing?: boolean };

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
  // Said whenever the answer is a guess from files: without a binary on PATH the user cannot start OpenCode here yet.
  const binary = version
    ? `\`opencode --version\` says ${version}, which is neither OpenCode 1 nor 2`
    : env.OPENCODE_BIN
      ? `$OPENCODE_BIN (${env.OPENCODE_BIN}) does not run`
      : `no \`opencode\` on PATH: install OpenCode (≥ ${OLDEST_SUPPORTED_V1}) or put it on PATH before starting it here`;
  const files = [...configCandidates("project", dir, env), ...configCandidates("global", dir, env)].filter((f) => fs.existsSync(f));
  for (const file of files) {
    const read = readOpencodeConfig(file);
    if (!read.ok) continue;
    if (read.value.plugins !== undefined)
      return { line: 2, version: null, binaryMissing: !version, how: `${binary}; ${file} has a "plugins" list (OpenCode 2)` };
    if (read.value.plugin !== undefined) return { line: 1, version: null, binaryMissing: !version, how: `${binary}; ${file} has a "plugin" list (OpenCode 1)` };
  }
  const global = globalConfigDir(env);
  if (fs.existsSync(path.join(global, "cli.json")))
    return { line: 2, version: null, binaryMissing: !version, how: `${binary}; ${path.join(global, "cli.json")} exists (OpenCode 2's TUI config)` };
  if (fs.existsSync(path.join(global, "tui.json")))
    return { line: 1, version: null, binaryMissing: !version, how: `${binary}; ${path.join(global, "tui.json")} exists (OpenCode 1's TUI config)` };
  const seen = files.length > 0 ? `${files.join(", ")} found but names no plugin list, which would tell OpenCode 1 from 2` : "no OpenCode config found";
  return { line: 1, version: null, binaryMissing: !version, how: `${binary}; ${seen}: assuming OpenCode 1` };
}

export function pluginKeyOf(line: HostLine): "plugin" | "plugins" {
  return HOST_LINES[line].pluginKey;
}
