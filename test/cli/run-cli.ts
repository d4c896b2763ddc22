import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { CLI_ENTRY } from "../harness/paths.ts";

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Fails early with the fix when the suite runs without `npm run build` (the CLI under test is the built one). */
export function assertCliBuilt(): void {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing: run \`npm run build\` before these tests`);
}

/**
 * Runs the built CLI as a user would (`node dist/cli/main.js …`) in its own process, so exit codes, stdout/stderr
 * separation and cross-process file behaviour are the real ones. `cwd` is where the user stands.
 */
export function runCli(args: string[], opts: { cwd: string; timeoutMs?: number; env?: Record<string, string> } = { cwd: process.cwd() }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_ENTRY, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, USER: "cli-test", NO_COLOR: "1", ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
