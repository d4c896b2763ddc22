import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { governancePaths } from "../../governance/storage/governance-paths.ts";
import { CLI_ENTRY } from "../harness/paths.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { assertCliBuilt } from "./run-cli.ts";

/**
 * `opencode-governance log | head -1`: the reader goes away after one line. More output than a pipe holds (64 KiB)
 * is left to write, so the CLI certainly meets a closed pipe; it must end quietly, exit 0, no stack trace.
 */
function pipedIntoHead(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // bash reports the CLI's own exit code (PIPESTATUS[0]), not head's; the CLI's stderr is captured apart.
    const script = 'node "$0" "$@" 2>"$CLI_ERR" | head -1; echo "cli-exit=${PIPESTATUS[0]}"; cat "$CLI_ERR" >&2';
    const child = spawn("bash", ["-c", script, CLI_ENTRY, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", USER: "cli-test", CLI_ERR: `${cwd}/.cli-stderr` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", reject);
    child.on("close", () => {
      const code = Number(/cli-exit=(\d+)/.exec(stdout)?.[1] ?? Number.NaN);
      resolve({ code, stdout: stdout.replace(/cli-exit=\d+\n/, ""), stderr });
    });
  });
}

let p: CliProject;
const SESSIONS = 900;

beforeAll(async () => {
  assertCliBuilt();
  p = await createCliProject();
  const paths = governancePaths(p.dir);
  const now = Date.now();
  // Running subagents: each is a budget line in `status` and a line in `sessions` (~100 bytes, ~90 KB in all).
  const root = "ses_0root000000000000000000AAA";
  await p.put({ sessionId: root, agent: "build" });
  for (let i = 0; i < SESSIONS; i++) {
    await p.put({ sessionId: `ses_1child${String(i).padStart(5, "0")}00000000000AA`, parentId: root, rootId: root, depth: 1, level: 2, agent: "worker" });
  }
  const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ at: now + i, type: "tool_call", sessionId: root, tool: "bash", n: i }));
  await writeFile(paths.auditLog, `${lines.join("\n")}\n`);
}, 120_000);
afterAll(() => p?.cleanup());

describe("output piped to a reader that closes (`| head -1`)", () => {
  for (const args of [["log", "--limit", "0"], ["log", "--limit", "0", "--json"], ["status"], ["sessions"]]) {
    it(`${args.join(" ")} | head -1 prints one line and ends quietly with exit 0`, async () => {
      const res = await pipedIntoHead(args, p.dir);
      expect(res.stderr).not.toMatch(/EPIPE|Error|at /);
      expect(res.stderr).toBe("");
      expect(res.code).toBe(0);
      expect(res.stdout.trimEnd().split("\n")).toHaveLength(1);
    });
  }
});
