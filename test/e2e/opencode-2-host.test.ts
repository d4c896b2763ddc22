/**
 * OpenCode 2 on the real host: the released 2.0.15 (installed on demand by the test prerequisites into .e2e-cache/,
 * test/harness/opencode-2-binary.ts), or the OpenCode 2 that `OPENCODE_BIN` names. One `opencode serve` started as its
 * users start it (the v2 API, OPENCODE_SERVER_PASSWORD and Basic auth), OpenCode 2's own config shape, the built plugin
 * in `.opencode/plugins/`, and the scripted model behind the OpenAI-compatible provider 2.0.15 bundles.
 * Without a binary (not linux-x64, the download refused or failed) every scenario is skipped with the reason.
 */
import fs from "fs-extra";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  allSessionRecords,
  auditEvents,
  e2eHost2,
  lastOf,
  type ModelRequest,
  onOpencode2,
  projectCli,
  type Reply,
  shippedAgentOf,
  textOf,
  toolCallsOf,
  waitFor,
} from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";

const subagent = (agent: string, prompt: string): Reply => ({
  toolCalls: [{ name: "subagent", args: { agent, description: `hand over to ${agent}`, prompt } }],
});
const shell = (command: string): Reply => ({ toolCalls: [{ name: "shell", args: { command, description: command } }] });

/** Markers in a session's first user message decide what it does. */
function respond(req: ModelRequest): Reply {
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  const who = shippedAgentOf(req);
  if (firstUser.includes("TOOLS")) {
    // Three shell calls, one of them failing: each one is a tool call the host ran and the gate must have seen.
    if (toolResults === 0) return shell("echo one");
    if (toolResults === 1) return shell("false");
    if (toolResults === 2) return shell("echo three");
    return { text: "tools done" };
  }
  if (firstUser.includes("CONFINED")) {
    // Issue 41: the key's folder hidden, the state folder read-only, the project writable — in the host's own shell.
    if (toolResults === 0)
      return shell('cat "$(ls -d "$HOME"/st*/opencode-gov*)"/q* 2>&1; echo x >> .opencode/plugins/governance.js 2>&1; touch made.txt && echo made');
    return { text: "confined done" };
  }
  if (firstUser.includes("CHAIN") && toolResults === 0) {
    if (who === "coordinator") return subagent("governance-high", "CHAIN high level work");
    if (who === "high") return subagent("governance-executor", "CHAIN execute it");
    if (who === "executor") return subagent("governance-verifier", "CHAIN verify it");
    if (who === "verifier") return subagent("governance-validator", "CHAIN validate it");
  }
  if (firstUser.includes("STOP-LADDER")) {
    // The child calls `shell` until governance refuses its call; the CLI stops it meanwhile.
    if (who === "coordinator") return toolResults === 0 ? subagent("governance-executor", "STOP-LADDER child") : { text: "coordinator done" };
    if (who === "executor") return toolResults < 200 ? { ...shell(`echo step ${toolResults}`), delayMs: 150 } : { text: "executor gave up" };
  }
  if (firstUser.includes("EXEC-SHELL")) {
    // The shipped executor's permission map (agents/governance-executor.md), as 2.0.15 reads it: `git status*` allowed,
    // everything else in the shell denied.
    if (who === "coordinator") return toolResults === 0 ? subagent("governance-executor", "EXEC-SHELL check") : { text: "coordinator done" };
    if (who === "executor")
      return toolResults === 0 ? shell("git status") : toolResults === 1 ? shell("echo not-in-the-allow-list") : { text: "executor done" };
  }
  if (toolResults > 0) return { text: `${who} finished` };
  if (firstUser.includes("LEAF-SPAWN")) {
    if (who === "coordinator") return subagent("governance-high", "LEAF-SPAWN go");
    if (who === "high") return subagent("governance-builder", "LEAF-SPAWN build");
    if (who === "builder") return subagent("general", "LEAF-SPAWN sneak");
  }
  return { text: `${who} done` };
}

onOpencode2("OpenCode 2, real host", (host) => {
  describe(`OpenCode ${host.version}, real host (${path.relative(process.cwd(), host.bin) || host.bin})`, () => {
    // The stop scenario's child repeats one call: the loop guard (test/e2e/budgets.test.ts) would stop it by itself.
    const { project, serve, stepsOf } = e2eHost2(host, { respond, agents: true, governanceYaml: "loops:\n  enabled: false\n" });
    const toolText = (req: ModelRequest | undefined) =>
      (req?.messages ?? [])
        .filter((m) => m.role === "tool")
        .map((m) => textOf(m.content))
        .join("\n");

    test("the server is OpenCode 2's: 401 without the password; the plugin loads from .opencode/plugins/ and says host 2", async () => {
      expect((await serve.api.raw("GET", "/api/session", { auth: false })).status).toBe(401);
      // The location boots (and loads its plugins) with its first session's first prompt.
      const root = await serve.api.createSession();
      expect((await serve.api.run(root.id, "HELLO")).outcome).toBe("succeeded");
      const started = await waitFor(() => auditEvents(project.governanceDir).find((e) => e.type === "plugin_started"), "plugin_started");
      expect(started).toMatchObject({ host: 2, hostVersion: host.version });
      const plugin = (await serve.api.plugins()).find((p) => p.id === "opencode-governance");
      expect(plugin).toMatchObject({ source: { type: "local" }, state: { status: "active" } });
      expect(auditEvents(project.governanceDir).find((e) => e.type === "host_detected")).toMatchObject({ line: 2, version: host.version });
      for (const r of stepsOf(root.id)) expect(r.system).toContain(PREFIX);
    });

    test("every model step carries the prefix, and coverage counts every tool call the host ran as gated (3/3)", async () => {
      const root = await serve.api.createSession();
      const idle = await serve.api.run(root.id, "TOOLS run three commands");
      expect(idle.outcome).toBe("succeeded");
      const calls = toolCallsOf(await serve.api.messages(root.id));
      expect(calls.map((c) => c.name)).toEqual(["shell", "shell", "shell"]);
      const steps = stepsOf(root.id);
      expect(steps.length).toBe(4);
      for (const r of steps) expect(r.system).toContain(PREFIX);
      // The host's tool events (`session.tool.success` / `failed`, by `id`) set against the calls the gate saw.
      const coverage = await waitFor(() => {
        const c = fs.readJsonSync(path.join(project.governanceDir, "coverage.json"), { throws: false }) as { last?: Record<string, unknown> } | null;
        return c?.last?.sessionId === root.id && c.last.tools === 3 ? c.last : undefined;
      }, "coverage of the root's 3 tool calls");
      expect(coverage).toMatchObject({ steps: 4, prefixed: 4, tools: 3, gated: 3, gaps: [] });
      const status = await projectCli(project, ["status"]);
      expect(status.stdout).toContain("3/3 tool calls gated");
    });

    test.skipIf(!fs.existsSync("/usr/bin/bwrap"))(
      "a `shell` command runs confined by bubblewrap: the key's folder empty, the plugin folder read-only (issue 41)",
      async () => {
        const root = await serve.api.createSession();
        expect((await serve.api.run(root.id, "CONFINED")).outcome).toBe("succeeded");
        const output = JSON.stringify(await serve.api.messages(root.id));
        expect(output).toContain("No such file or directory");
        expect(output).toContain("Read-only file system");
        expect(output).toContain("made");
        expect(fs.readFileSync(path.join(project.dir, ".opencode", "plugins", "governance.js"), "utf8")).not.toContain("x\n");
        expect(fs.existsSync(path.join(project.dir, "made.txt"))).toBe(true);
      },
    );

    test("delegation through `subagent`: depths 1, 2, 3; the fourth-level spawn is an EMERGENCY_HALT and spawns nothing", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      await serve.api.run(root.id, "CHAIN start", 90_000);
      const records = allSessionRecords(project.governanceDir);
      const byAgent = (a: string) => records.filter((r) => r.agent === a && r.rootId === root.id);
      const [high, executor, verifier] = [byAgent("governance-high")[0], byAgent("governance-executor")[0], byAgent("governance-verifier")[0]];
      expect(high).toMatchObject({ depth: 1, parentId: root.id });
      expect(executor).toMatchObject({ depth: 2, parentId: high!.sessionId });
      expect(verifier).toMatchObject({ depth: 3, parentId: executor!.sessionId });
      expect(byAgent("governance-validator")).toEqual([]);
      expect(verifier!.children).toEqual([]);
      expect(toolText(stepsOf(verifier!.sessionId).at(-1))).toContain("MAX_DELEGATION_DEPTH_EXCEEDED");
      expect(auditEvents(project.governanceDir).find((e) => e.type === "emergency_halt")).toMatchObject({
        sessionId: verifier!.sessionId,
        targetAgent: "governance-validator",
        childDepth: 4,
      });
      expect((await serve.api.children(verifier!.sessionId)).length).toBe(0);
      // Every tool the prefix tells the coordinator to call is one 2.0.15 offers it (`subagent`, never `task`; no
      // `todowrite`: 2.0.15 has no todo tool).
      const first = stepsOf(root.id)[0]!;
      const prefix = first.system.slice(first.system.indexOf(PREFIX)).split("\n").slice(0, 5).join("\n");
      const named = [...prefix.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
      expect(named).toContain("subagent");
      for (const tool of named) expect(first.tools, `the prefix names \`${tool}\``).toContain(tool);
    });

    test("a leaf agent's `subagent` call is refused (LEAF_AGENT) and creates no session", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      await serve.api.run(root.id, "LEAF-SPAWN start", 90_000);
      const builder = allSessionRecords(project.governanceDir).find((r) => r.agent === "governance-builder" && r.rootId === root.id);
      expect(builder).toBeDefined();
      expect(builder!.children).toEqual([]);
      // The host's own line: the builder's `task: "*": deny` (agents/governance-builder.md) is 2.0.15's `subagent`
      // deny, so the tool is not offered to it at all.
      expect(stepsOf(builder!.sessionId)[0]!.tools).not.toContain("subagent");
      expect(toolText(stepsOf(builder!.sessionId).at(-1))).toContain("LEAF_AGENT");
      expect(auditEvents(project.governanceDir).some((e) => e.type === "delegation_blocked" && e.kind === "leaf")).toBe(true);
      expect((await serve.api.children(builder!.sessionId)).length).toBe(0);
      expect(lastOf(stepsOf(root.id)[0]!, "user")).toContain("LEAF-SPAWN");
    });

    // Decision 0071: confinement leaves the command as the agent wrote it (the host checks the agent's `shell` rules on
    // it) and enters the sandbox through the shell's environment at `shell.hook("create.before")`. On main before it, the
    // command was rewritten to `bwrap … -- bash -c '<command>'` and the executor's `git status*` allow never matched.
    test("the shipped executor runs the shell command its agent file allows (`git status`) and is refused the others, by 2.0.15's own permissions", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      await serve.api.run(root.id, "EXEC-SHELL start", 60_000);
      const executor = allSessionRecords(project.governanceDir).find((r) => r.agent === "governance-executor" && r.rootId === root.id)!;
      const steps = stepsOf(executor.sessionId);
      expect(steps[0]!.tools).toEqual(expect.arrayContaining(["shell", "subagent"]));
      expect(toolText(steps[1])).toMatch(/On branch|No commits yet/);
      expect(lastOf(steps[2]!, "tool")).toContain("Permission denied: shell");
    });

    test("a CLI stop climbs L1 → L2 → L3 on the child's `shell` results, and the parent is told its last call by the host's name (`shell`)", async () => {
      const root = await serve.api.createSession({ agent: "governance-coordinator" });
      const since = Date.now() - 5;
      await serve.api.prompt(root.id, "STOP-LADDER start");
      const child = await waitFor(
        () => allSessionRecords(project.governanceDir).find((r) => r.agent === "governance-executor" && r.rootId === root.id && r.counters?.toolCalls > 0),
        "the child running shell calls",
        30_000,
      );
      const stop = await projectCli(project, ["stop", child.sessionId, "--reason", "wrong approach"]);
      expect(stop.code, stop.stderr).toBe(0);
      const stopped = await waitFor(
        () => {
          const r = allSessionRecords(project.governanceDir).find((x) => x.sessionId === child.sessionId);
          return r?.control === "stopped" ? r : undefined;
        },
        "child stopped",
        45_000,
      );
      expect(stopped.stop.delivered).toEqual([1, 2, 3]);
      await serve.api.waitIdle(root.id, since, 45_000);
      const told = stepsOf(root.id)
        .map((r) => toolText(r))
        .find((t) => t.includes("SUBAGENT STOPPED"));
      expect(told, "the parent read that its child was stopped").toBeDefined();
      // 2.0.15 has no `bash` ("No tool named \"bash\""): the text names the tool the child really called.
      expect(told).toContain("Its last tool call: `shell`");
      expect(told).not.toContain("`bash`");
    });
  });
});
