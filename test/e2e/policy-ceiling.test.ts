import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { e2eHost, lastOf, type ModelRequest, projectCli, type Reply, textOf, waitFor } from "../harness/index.ts";

/**
 * Issue 30 on the real host: an organisation's policy (through OPENCODE_GOVERNANCE_POLICY, as a config-management
 * tool would point at it) holds a budget and a depth ceiling against a repository whose governance.yaml removes the
 * budget and raises the depth; the refusal is audited `policy_ceiling`; `status --explain` names the layers; and a
 * project's own smaller budget still fires first.
 */
const ORG_POLICY = "delegation:\n  maxDepth: 1\nbudgets:\n  default:\n    toolCalls: 3\n";
const HOSTILE_PROJECT = `
delegation:
  maxDepth: 16
budgets:
  default: {}
  agents:
    governance-verifier: { toolCalls: 2 }
loops:
  enabled: false
`;

const task = (subagent_type: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: `run ${subagent_type}`, prompt, subagent_type } }],
});
const step = (i: number): Reply => ({ toolCalls: [{ name: "bash", args: { command: `git status -- f${i}`, description: "step" } }] });

function respond(req: ModelRequest): Reply {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = lastOf(req, "tool") ?? "";
  if (last.includes("SESSION STOP") || last.includes("SESSION TERMINATED")) return { text: "stopped as asked" };
  const child = /CHILD (\w+)/.exec(first)?.[1];
  if (!child) {
    const m = /PARENT (\w+) ([\w-]+)/.exec(first);
    if (!m) return { text: "ok" };
    return tools === 0 ? task(m[2] as string, `CHILD ${m[1]}`) : { text: "parent done" };
  }
  if (child === "depth") return tools === 0 ? task("governance-builder", "CHILD quick") : { text: "depth child done" };
  if (child === "quick") return { text: "quick done" };
  return tools < 10 ? step(tools) : { text: "never stopped" };
}

describe("the organisation's ceilings hold against a repository that removes them (real opencode serve)", () => {
  let policy: string;

  const { project, serve, events } = e2eHost({
    respond,
    agents: true,
    governanceYaml: HOSTILE_PROJECT,
    beforeServe: async () => {
      policy = path.join(project.home, "etc", "policy.yaml");
      fs.mkdirSync(path.dirname(policy), { recursive: true });
      fs.writeFileSync(policy, ORG_POLICY, { mode: 0o644 });
      project.env.OPENCODE_GOVERNANCE_POLICY = policy;
    },
    timeoutMs: 60_000,
  });

  const childOf = async (rootId: string) => (await serve.http.children(rootId))[0]?.id as string;

  async function run(prompt: string): Promise<string> {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, prompt, { agent: "governance-coordinator" });
    await serve.http.waitIdle([root.id], 40_000);
    return childOf(root.id);
  }

  test("the budget the project removed still stops a subagent at the organisation's 3 tool calls", async () => {
    const child = await run("PARENT tools governance-executor");
    const exceeded = events("budget_exceeded").filter((e) => e.sessionId === child);
    expect(exceeded).toEqual([expect.objectContaining({ key: "toolCalls", limit: 3, scope: "session" })]);
  });

  test("the depth the project raised to 16 still halts a depth-2 spawn (organisation's maxDepth 1)", async () => {
    const child = await run("PARENT depth governance-executor");
    const halt = events("emergency_halt").find((e) => e.sessionId === child);
    expect(halt).toMatchObject({ kind: "max_depth", enforced: true });
    expect(await serve.http.children(child)).toEqual([]);
  });

  test("a project's own smaller budget fires first (2 tool calls, under the organisation's 3)", async () => {
    const child = await run("PARENT tight governance-verifier");
    const exceeded = events("budget_exceeded").filter((e) => e.sessionId === child);
    expect(exceeded).toEqual([expect.objectContaining({ key: "toolCalls", limit: 2 })]);
  });

  test("the refused loosenings are audited policy_ceiling once for the load, naming the layer of each ceiling", async () => {
    // The plugin loads with OpenCode's first session (the scenarios above); one load, one line.
    const lines = await waitFor(() => (events("policy_ceiling").length > 0 ? events("policy_ceiling") : undefined), "policy_ceiling");
    expect(events("plugin_started")).toHaveLength(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.refused).toEqual(
      expect.arrayContaining([
        { path: "delegation.maxDepth", layer: "project", value: "16", ceiling: "1", ceilingLayer: "organisation" },
        { path: "budgets.default.toolCalls", layer: "project", value: "no limit", ceiling: "3", ceilingLayer: "organisation" },
      ]),
    );
  });

  test("status --explain names the layer of every limit and both values of each refusal", async () => {
    const res = await projectCli(project, ["status", "--explain"]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`organisation: ${policy} (file)`);
    expect(res.stdout).toMatch(/delegation\.maxDepth\s+1\s+organisation/);
    expect(res.stdout).toMatch(/budgets\.default\.toolCalls\s+3\s+organisation/);
    expect(res.stdout).toMatch(/budgets\.agents\.governance-verifier\.toolCalls\s+2\s+project/);
    expect(res.stdout).toContain(`delegation.maxDepth: the project's file sets 16, looser than 1 set by the organisation's policy (${policy}); 1 applies`);
  });
});
