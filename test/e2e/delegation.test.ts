import { describe, expect, test } from "vitest";
import path from "node:path";
import fs from "fs-extra";
import {
  allSessionRecords,
  auditEvents,
  conversation,
  createTestProject,
  e2eHost,
  lastOf,
  type ModelRequest,
  type Reply,
  serveOpencode,
  shippedAgentOf,
  startScriptedModel,
  textOf,
  waitFor,
} from "../harness/index.ts";

const task = (subagent_type: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: `hand over to ${subagent_type}`, prompt, subagent_type } }],
});

/**
 * A builder whose OpenCode permissions WOULD allow `task`: governance must still refuse it, because the plugin's
 * roles hold even where OpenCode's own permissions allow more (its permission.ask hook never fires, #7006).
 */
const PERMISSIVE_BUILDER = `---
description: Builder (leaf) with an over-broad OpenCode permission, for the test.
mode: subagent
permission:
  task:
    "*": allow
---
You are a builder, a leaf agent: do the work yourself.
`;

/** Markers in the first user message of each session decide who delegates to whom. */
function respond(req: ModelRequest): Reply {
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  const lastUser = lastOf(req, "user") ?? "";
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  const who = shippedAgentOf(req);
  if (lastUser.includes("HANG")) return { hang: true };
  if (toolResults > 0) return { text: `${who} finished` };
  if (firstUser.includes("CHAIN")) {
    if (who === "coordinator") return task("governance-high", "CHAIN high level work");
    if (who === "high") return task("governance-executor", "CHAIN execute it");
    if (who === "executor") return task("governance-verifier", "CHAIN verify it");
    if (who === "verifier") return task("governance-validator", "CHAIN validate it");
  }
  if (firstUser.includes("LEAF-SPAWN")) {
    if (who === "coordinator") return task("governance-high", "LEAF-SPAWN go");
    if (who === "high") return task("governance-builder", "LEAF-SPAWN build");
    if (who === "builder") return task("general", "LEAF-SPAWN sneak");
  }
  if (firstUser.includes("OFF-LIST") && who === "coordinator") return task("governance-builder", "OFF-LIST build directly");
  if (firstUser.includes("SLOW-CHILD")) {
    if (who === "coordinator") return task("governance-high", "SLOW-CHILD work slowly");
    if (who === "high") return { hang: true };
  }
  return { text: `${who} done` };
}

describe("delegation hierarchy in a real opencode serve", () => {
  const { model, project, serve, stepsOf } = e2eHost({ respond, agents: true, extraAgents: { "governance-builder": PERMISSIVE_BUILDER } });

  test("coordinator → high → executor → verifier get depths 1, 2, 3; the fourth-level spawn is an EMERGENCY_HALT and spawns nothing", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "CHAIN start", { agent: "governance-coordinator" });
    await serve.http.waitIdle([root.id]);
    const records = allSessionRecords(project.governanceDir);
    const byAgent = (a: string) => records.filter((r) => r.agent === a && r.rootId === root.id);
    const [high, executor, verifier] = [byAgent("governance-high")[0], byAgent("governance-executor")[0], byAgent("governance-verifier")[0]];
    expect(high).toMatchObject({ depth: 1, level: 2, parentId: root.id });
    expect(executor).toMatchObject({ depth: 2, level: 3, parentId: high!.sessionId });
    expect(verifier).toMatchObject({ depth: 3, level: 3, parentId: executor!.sessionId });
    expect(byAgent("governance-validator")).toEqual([]);
    expect(verifier!.children).toEqual([]);
    expect(verifier!.counters.violations).toBe(1);

    // The verifier's next request carries the halt message as the task's result.
    const verifierSteps = stepsOf(verifier!.sessionId);
    const toolResult = verifierSteps
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .map((m) => textOf(m.content))
      .join("\n");
    expect(toolResult).toContain("EMERGENCY_HALT");
    expect(toolResult).toContain("MAX_DELEGATION_DEPTH_EXCEEDED");
    const halt = auditEvents(project.governanceDir).find((e) => e.type === "emergency_halt");
    expect(halt).toMatchObject({ sessionId: verifier!.sessionId, targetAgent: "governance-validator", childDepth: 4 });

    // Each parent lists its child; the child's first request carried the governance context block, the root's did not.
    expect(records.find((r) => r.sessionId === root.id)!.children.map((c: { agent: string }) => c.agent)).toEqual(["governance-high"]);
    expect(JSON.stringify(stepsOf(high!.sessionId)[0]!.messages)).toContain("<governance-context>");
    expect(JSON.stringify(stepsOf(root.id)[0]!.messages)).not.toContain("<governance-context>");
    // The chain completed back up: every task closed.
    for (const r of [high, executor]) {
      const parent = records.find((p) => p.sessionId === r!.parentId)!;
      expect(parent.children.find((c: { sessionId: string }) => c.sessionId === r!.sessionId)).toMatchObject({ outcome: "completed" });
    }
  });

  test("a leaf that calls task is blocked; a target outside the caller's allow-list is blocked", async () => {
    const a = await serve.http.createSession();
    await serve.http.prompt(a.id, "LEAF-SPAWN start", { agent: "governance-coordinator" });
    await serve.http.waitIdle([a.id]);
    const builder = allSessionRecords(project.governanceDir).find((r) => r.agent === "governance-builder" && r.rootId === a.id);
    expect(builder).toBeDefined();
    expect(builder!.children).toEqual([]);
    const leafResult = stepsOf(builder!.sessionId)
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .map((m) => textOf(m.content))
      .join("\n");
    expect(leafResult).toContain("LEAF_AGENT");

    const b = await serve.http.createSession();
    await serve.http.prompt(b.id, "OFF-LIST start", { agent: "governance-coordinator" });
    await serve.http.waitIdle([b.id]);
    const offList = stepsOf(b.id)
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .map((m) => textOf(m.content))
      .join("\n");
    expect(offList).toContain("TARGET_NOT_ALLOWED");
    const blocked = auditEvents(project.governanceDir).filter((e) => e.type === "delegation_blocked");
    expect(blocked.map((e) => e.kind).sort()).toEqual(["leaf", "not_allowed"]);
    expect((await serve.http.children(b.id)).length).toBe(0);
  });

  test("after a child task is aborted mid-run, the parent can spawn again at the same depth", async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "SLOW-CHILD start", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root.id))[0], "child session");
    await waitFor(() => stepsOf(child.id).length > 0 && model.openStreams() > 0, "child streaming");
    await serve.http.abort(child.id);
    await serve.http.waitIdle([root.id, child.id]);
    await waitFor(() => allSessionRecords(project.governanceDir).find((r) => r.sessionId === root.id)?.children[0]?.closedAt, "child link closed");

    // First step of the new turn (the last message is the user's): spawn the same agent again.
    model.setRespond((req) => (req.sessionId === root.id && conversation(req).at(-1)?.role === "user" ? task("governance-high", "again") : respond(req)));
    await serve.http.prompt(root.id, "spawn again", { agent: "governance-coordinator" });
    await serve.http.waitIdle([root.id]);
    model.setRespond(respond);
    const rec = allSessionRecords(project.governanceDir).find((r) => r.sessionId === root.id)!;
    expect(rec.children.length).toBe(2);
    expect(rec.children[0]).toMatchObject({ outcome: "aborted" });
    const second = allSessionRecords(project.governanceDir).find((r) => r.sessionId === rec.children[1].sessionId)!;
    expect(second).toMatchObject({ depth: 1, parentId: root.id });
    expect(auditEvents(project.governanceDir).filter((e) => e.type === "emergency_halt" && e.sessionId === root.id)).toEqual([]);
  });
});

/** Governance narrower than OpenCode's permissions: the coordinator may only delegate to the planner. */
const NARROW_LOG_ONLY = `
agents:
  governance-coordinator: { role: primary, mayDelegateTo: [governance-planner] }
  governance-high: { role: delegating, mayDelegateTo: [governance-builder] }
  governance-builder: { role: leaf }
`;

describe("log-only enforcement", () => {
  test("an off-list spawn and a leaf spawn go through and are recorded", async () => {
    const model = await startScriptedModel(respond);
    const project = createTestProject({
      modelUrl: model.url,
      agents: true,
      extraAgents: { "governance-builder": PERMISSIVE_BUILDER },
      governanceYaml: NARROW_LOG_ONLY,
    });
    // Enforcement off is the user's own choice, never a project file's (issue 20 §2): the user-level config.
    fs.outputFileSync(path.join(project.home, "config", "opencode", "governance.yaml"), "enforcement: log-only\n");
    const serve = await serveOpencode(project);
    try {
      const s = await serve.http.createSession();
      await serve.http.prompt(s.id, "LEAF-SPAWN start", { agent: "governance-coordinator" });
      await serve.http.waitIdle([s.id]);
      const records = allSessionRecords(project.governanceDir);
      // coordinator → high (off its governance list) → builder → general (a leaf spawning): all three exist.
      expect(records.map((r) => r.agent).sort()).toEqual(["general", "governance-builder", "governance-coordinator", "governance-high"]);
      const blocked = auditEvents(project.governanceDir).filter((e) => e.type === "delegation_blocked");
      expect(blocked.map((e) => [e.kind, e.enforced])).toEqual([
        ["not_allowed", false],
        ["leaf", false],
      ]);
      // The model is told, on the task's result, that enforce mode would have blocked it.
      const coordinatorResult = model.requests
        .filter((r) => r.sessionId === s.id && r.kind === "agent")
        .at(-1)!
        .messages.filter((m) => m.role === "tool")
        .map((m) => textOf(m.content))
        .join("\n");
      expect(coordinatorResult).toContain("log-only");
    } finally {
      await serve.stop();
      await model.close();
      project.cleanup();
    }
  });
});
