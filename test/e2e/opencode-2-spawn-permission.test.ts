/**
 * A spawn refused through OpenCode 2.0.15's own permission evaluation (`permission.hook("evaluate")`,
 * docs/decisions/0062-spawn-refused-by-permission.md), before the child session exists. The `execute.before` gate is
 * left out (the test-only `OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS=execute.before`, plugin/opencode-2/setup.ts), as a host
 * that stops calling it or a gate that fails open would leave it: the refusal must then come from the permission hook.
 * The coordinator's allow-list is narrowed to `governance-high` in governance.yaml while its agent file lets the host
 * spawn `governance-planner` too, so the host's own rules allow the call and only governance refuses it.
 * The same project shows the shipped agents' permission maps at work on 2.0.15 when no rewrite hides the command
 * from the host's check (the gate's confinement wrap does: test/e2e/opencode-2-host.test.ts, its known-bug tripwire).
 */
import path from "node:path";
import { describe, expect, test } from "vitest";
import { auditEvents, e2eHost2, lastOf, type ModelRequest, onOpencode2, type Reply, textOf } from "../harness/index.ts";

const subagent = (agent: string): Reply => ({ toolCalls: [{ name: "subagent", args: { agent, description: `hand over to ${agent}`, prompt: "do it" } }] });

const shell = (command: string): Reply => ({ toolCalls: [{ name: "shell", args: { command, description: command } }] });

function respond(req: ModelRequest): Reply {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  if (first.includes("EXEC-SHELL")) {
    // The shipped executor's permission map (agents/governance-executor.md) as 2.0.15 reads it: `git status*` allowed.
    if (req.system.includes("You are an executor"))
      return tools === 0 ? shell("git status") : tools === 1 ? shell("echo not-in-the-allow-list") : { text: "done" };
    return tools === 0
      ? { toolCalls: [{ name: "subagent", args: { agent: "governance-executor", description: "x", prompt: "EXEC-SHELL check" } }] }
      : { text: "done" };
  }
  if (first.includes("You are a subagent")) return { text: "child done" };
  if (tools === 0) return subagent("governance-planner");
  if (tools === 1) return subagent("governance-high");
  return { text: "coordinator done" };
}

onOpencode2("OpenCode 2 spawn refused by its permission evaluation, real host", (host) => {
  describe(`OpenCode ${host.version}, real host (${path.basename(host.bin)}): a spawn refused before its session exists`, () => {
    const { model, project, serve } = e2eHost2(host, {
      respond,
      agents: true,
      // The gate left out is a gap governance reports (asserted below).
      allowGovernanceGaps: true,
      governanceYaml: "agents:\n  governance-coordinator:\n    role: primary\n    mayDelegateTo: [governance-high, governance-executor]\n",
      serveEnv: { OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS: "execute.before" },
    });

    test("without the tool gate, the permission hook denies the spawn outside the allow-list: no child session, the model reads why; an allowed spawn still runs", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      expect((await serve.api.run(root.id, "delegate twice", 90_000)).outcome).toBe("succeeded");
      const children = await serve.api.children(root.id);
      expect(children.map((c) => c.agent)).toEqual(["governance-high"]);
      const steps = model.requests.filter((r) => r.kind === "agent" && r.sessionId === root.id);
      const refusal = lastOf(steps[1]!, "tool") ?? "";
      expect(refusal).toContain("may not delegate to");
      expect(refusal).toContain("governance-planner");
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "delegation_blocked")).toEqual([
        expect.objectContaining({ sessionId: root.id, kind: "not_allowed", targetAgent: "governance-planner" }),
      ]);
      // Governance says its gate did not see these calls (coverage, decision 0012).
      expect(auditEvents(project.governanceDir).some((e) => e.type === "governance_gap" && e.missing === "tool_gate")).toBe(true);
    });

    test("the shipped executor's OpenCode 1 permission map is 2.0.15's: `git status` runs, `echo` is refused (`bash` → `shell`)", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      await serve.api.run(root.id, "EXEC-SHELL start", 60_000);
      const [executor] = await serve.api.children(root.id);
      expect(executor?.agent).toBe("governance-executor");
      const steps = model.requests.filter((r) => r.kind === "agent" && r.sessionId === executor!.id);
      expect(steps[0]!.tools).toEqual(expect.arrayContaining(["shell", "subagent"]));
      expect(lastOf(steps[1]!, "tool")).toMatch(/On branch|No commits yet/);
      expect(lastOf(steps[2]!, "tool")).toContain("Permission denied: shell");
    });
  });
});
