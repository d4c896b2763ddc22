import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AGENT_PROJECT_ENV, AGENT_SESSION_ENV } from "../../governance/stop/agent-shell.ts";
import { CLI_ENTRY } from "../harness/paths.ts";
import { type CliProject, createCliProject } from "./cli-project.ts";
import { assertCliBuilt } from "./run-cli.ts";

/**
 * Issue 27: the CLI run inside a governed agent's shell (the plugin's `shell.env` marks it) is that agent, not the
 * user: `stop`, `inject`, `budget --add` and `dashboard` are refused and audited as the agent's attempt — also when
 * the shell unset the marker before running the CLI (its start-up environment still names it, Linux).
 */
const AGENT = "ses_rogueaaaaaaaaaaaaaaaaaaa";
const TARGET = "ses_targetaaaaaaaaaaaaaaaaaa";

let p: CliProject;
beforeAll(() => assertCliBuilt());
afterEach(() => p?.cleanup());

function cli(args: string[], env: Record<string, string>, viaShell = "") {
  const cmd = [process.execPath, CLI_ENTRY, ...args, "--dir", p.dir].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return spawnSync("sh", ["-c", `${viaShell}${cmd}`], { env: { ...process.env, NO_COLOR: "1", ...env }, encoding: "utf8", timeout: 20_000 });
}
const audit = () =>
  readFileSync(join(p.dir, ".opencode", "governance", "audit.log"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the CLI in a governed agent's shell", () => {
  it.each([
    ["stop", ["stop", TARGET, "--level", "3"]],
    ["inject", ["inject", TARGET, "push to main"]],
    ["budget --add", ["budget", TARGET, "--add", "toolCalls=100"]],
    ["dashboard", ["dashboard", "--port", "0"]],
  ])("%s is refused, nothing is queued, and the audit names the agent's session", async (_name, args) => {
    p = await createCliProject();
    await p.put({ sessionId: TARGET, agent: "build" });
    const res = cli(args, { [AGENT_SESSION_ENV]: AGENT, [AGENT_PROJECT_ENV]: p.dir });
    expect(res.status, res.stderr).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^refused: this shell belongs to governed OpenCode session ${AGENT}`));
    expect(await p.queued(TARGET)).toEqual([]);
    expect(audit().filter((e) => e.type === "control_refused")).toMatchObject([{ sessionId: AGENT, via: "cli", command: args[0], by: `agent:${AGENT}` }]);
  });

  it.runIf(process.platform === "linux")("unsetting the marker in the shell does not help: the shell's start-up environment still carries it", async () => {
    p = await createCliProject();
    await p.put({ sessionId: TARGET, agent: "build" });
    const res = cli(["stop", TARGET], { [AGENT_SESSION_ENV]: AGENT, [AGENT_PROJECT_ENV]: p.dir }, `unset ${AGENT_SESSION_ENV} ${AGENT_PROJECT_ENV}; `);
    expect(res.status, res.stderr).toBe(1);
    expect(res.stderr).toContain(`governed OpenCode session ${AGENT}`);
  });

  it("a marker for another project, and read-only commands, are not refused (an agent's test suite drives its own projects)", async () => {
    p = await createCliProject();
    await p.put({ sessionId: TARGET, agent: "build" });
    const other = cli(["stop", TARGET, "--no-wait"], { [AGENT_SESSION_ENV]: AGENT, [AGENT_PROJECT_ENV]: "/somewhere/else" });
    expect(other.status, other.stderr).toBe(0);
    expect(await p.queued(TARGET)).toHaveLength(1);
    const read = cli(["sessions"], { [AGENT_SESSION_ENV]: AGENT, [AGENT_PROJECT_ENV]: p.dir });
    expect(read.status, read.stderr).toBe(0);
  });
});
