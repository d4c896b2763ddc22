import { describe, expect, test } from "vitest";
import path from "node:path";
import fs from "fs-extra";
import { allSessionRecords, auditEvents, e2eHost, listen, type ModelRequest, projectCli, type Reply, textOf, waitFor } from "../harness/index.ts";

/**
 * On the real binary (docs/decisions/0030-project-agents-named.md): a project with agents of its own — an `orchestrator` primary that delegates to
 * its `worker` — installs governance and writes no config. The first start names both in the governance.yaml it
 * generates, with the roles OpenCode's settings give them, so the orchestrator keeps delegating (before: "⛔
 * DELEGATION BLOCKED: LEAF_AGENT orchestrator … return to your parent"). An agent added afterwards is refused in the
 * user's terms, with the lines to add, and a root session is never told to return to a parent it does not have.
 */

const ORCHESTRATOR = `---
description: The project's own coordinator.
mode: primary
permission:
  task: allow
---
You are the project orchestrator.
`;

const WORKER = `---
description: Does the work the orchestrator hands over.
mode: subagent
---
You are the project worker.
`;

const NEWCOMER = `---
description: Added after governance was installed.
mode: primary
permission:
  task:
    "*": deny
    worker: allow
---
You are the newcomer.
`;

function agentOf(req: ModelRequest): string {
  if (req.system.includes("You are the project orchestrator")) return "orchestrator";
  if (req.system.includes("You are the project worker")) return "worker";
  if (req.system.includes("You are the newcomer")) return "newcomer";
  return "other";
}

const task = (subagent_type: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: `hand over to ${subagent_type}`, prompt, subagent_type } }],
});

function respond(req: ModelRequest): Reply {
  const who = agentOf(req);
  if (req.messages.some((m) => m.role === "tool")) return { text: `${who} finished` };
  if (who === "orchestrator" || who === "newcomer") return task("worker", "WORK on the thing");
  return { text: `${who} done` };
}

const toolResults = (req: ModelRequest) =>
  req.messages
    .filter((m) => m.role === "tool")
    .map((m) => textOf(m.content))
    .join("\n");

describe("a project's own agents keep working", () => {
  const { model, project, serve, startServe } = e2eHost({ respond, extraAgents: { orchestrator: ORCHESTRATOR, worker: WORKER }, serve: false });

  const configFile = () => path.join(project.dir, ".opencode", "governance.yaml");

  test("the first start names orchestrator and worker from OpenCode's settings; the orchestrator delegates and the worker's request arrives", async () => {
    expect(fs.existsSync(configFile())).toBe(false);
    await startServe();
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "Get the thing done", { agent: "orchestrator" });
    await serve.http.waitIdle([root.id], 30_000);

    const yaml = fs.readFileSync(configFile(), "utf8");
    expect(yaml).toContain(
      '  # from .opencode/agent/orchestrator.md: mode primary, task allow\n  orchestrator:\n    role: primary\n    mayDelegateTo: ["*"]\n',
    );
    expect(yaml).toContain("  # from .opencode/agent/worker.md: mode subagent, no task permission\n  worker:\n    role: leaf\n    mayDelegateTo: []\n");
    expect(auditEvents(project.governanceDir).find((e) => e.type === "config_agents_named")).toMatchObject({ agents: ["orchestrator", "worker"] });

    const worker = allSessionRecords(project.governanceDir).find((r) => r.agent === "worker");
    expect(worker).toMatchObject({ parentId: root.id, depth: 1 });
    const workerRequests = model.requests.filter((r) => r.kind === "agent" && r.sessionId === worker!.sessionId);
    expect(workerRequests.length).toBeGreaterThan(0);
    expect(agentOf(workerRequests[0]!)).toBe("worker");
    expect(auditEvents(project.governanceDir).filter((e) => e.type === "delegation_blocked")).toEqual([]);

    // The orchestrator read the worker's answer, and its prefix calls it a primary, not a leaf.
    const rootRequests = model.requests.filter((r) => r.kind === "agent" && r.sessionId === root.id);
    expect(toolResults(rootRequests.at(-1)!)).toContain("worker done");
    expect(rootRequests[0]!.system).toContain("orchestrator, PRIMARY");
    expect(rootRequests[0]!.system).not.toContain("LEAF");
    // The texts name only tools the orchestrator is offered (OpenCode 1.18 has `todowrite`, no `todoread`).
    const prefix = rootRequests[0]!.system.slice(rootRequests[0]!.system.indexOf("## Governance Context"));
    const named = [...prefix.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string);
    console.log(`tools offered to the orchestrator: ${rootRequests[0]!.tools.join(", ")}; tools its prefix names: ${named.join(", ")}`);
    expect(named.length).toBeGreaterThan(0);
    for (const tool of named) expect(rootRequests[0]!.tools).toContain(tool);
  });

  test("an agent added later is refused in the user's terms, with the lines to add; the root is not told to return to a parent", async () => {
    await serve.stop();
    fs.outputFileSync(path.join(project.dir, ".opencode", "agent", "newcomer.md"), NEWCOMER);
    await startServe();
    const bus = listen(serve.url, project.dir);
    try {
      const root = await serve.http.createSession();
      await serve.http.prompt(root.id, "Get the other thing done", { agent: "newcomer" });
      await serve.http.waitIdle([root.id], 30_000);

      const lines = [
        "`newcomer` is not named in .opencode/governance.yaml, so it may not delegate; to let it, add:",
        '  # from .opencode/agent/newcomer.md: mode primary, task "*": deny, "worker": allow',
        "  newcomer:",
        "    role: primary",
        '    mayDelegateTo: ["!*", "worker"]',
      ].join("\n");
      const rootRequests = model.requests.filter((r) => r.kind === "agent" && r.sessionId === root.id);
      const refusal = toolResults(rootRequests.at(-1)!);
      console.log(`the refusal as the model read it:\n${refusal}`);
      expect(refusal).toContain(lines);
      expect(refusal).not.toContain("return to your parent");
      expect(allSessionRecords(project.governanceDir).filter((r) => r.agent === "worker")).toHaveLength(1);
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "delegation_blocked")).toEqual([
        expect.objectContaining({ kind: "not_named", callerAgent: "newcomer", targetAgent: "worker" }),
      ]);
      const toast = () => bus.events.filter((e) => e.type === "tui.toast.show" && String(e.properties?.message).includes("newcomer"));
      await waitFor(() => toast().length > 0 || undefined, "the toast on the event stream");
      expect(String(toast()[0]?.properties?.message)).toContain(lines);

      for (const args of [["doctor"], ["status", "--explain"]]) {
        const out = await projectCli(project, args);
        expect(out.stdout, `${args.join(" ")}\n${out.stderr}`).toContain(lines);
        expect(out.stdout).toMatch(/orchestrator\s+primary\s+.*from \.opencode\/agent\/orchestrator\.md/);
        expect(out.stdout).toMatch(/worker\s+leaf\s+.*from \.opencode\/agent\/worker\.md/);
      }
    } finally {
      bus.close();
    }
  });
});
