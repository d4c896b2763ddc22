/**
 * The scenario table's control rows on the real OpenCode 2.0.15 (issue 40): inject, the hard stop, Escape of the root
 * with both interrupt shapes and the resume that follows, compaction, the CLI against a V2 project, and last the
 * process exiting mid-run and a new `opencode serve` picking the sessions up. One `opencode serve` for every case but
 * the restart (each 2.0.15 start costs seconds); each case is its own task tree, told apart by a marker in its prompt.
 * The same rows on OpenCode 1.18: stop-and-inject, resume-and-compaction, process-exit, exit-paths.
 */
import { describe, expect, test } from "vitest";
import { SUBAGENT_STOPPED_HEADING } from "../../governance/texts/stop-directives.ts";
import {
  allSessionRecords,
  e2eHost2,
  lastOf,
  locksLeft,
  type ModelRequest,
  onOpencode2,
  type Reply,
  REPO_ROOT,
  sessionRecord,
  statusNote,
  textOf,
  waitFor,
} from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";
const RESUME = "## Resumed Session (opencode-governance)";
const REMINDER = "## Post-Compaction Context Recovery (opencode-governance)";
const DEADLINE_MS = 4_000;

const subagent = (agent: string, prompt: string): Reply => ({
  toolCalls: [{ name: "subagent", args: { agent, description: `hand over to ${agent}`, prompt } }],
});
const shell = (command: string, delayMs = 0): Reply => ({ toolCalls: [{ name: "shell", args: { command, description: command } }], delayMs });

function respond(req: ModelRequest): Reply {
  if (req.kind === "compaction") {
    // 2.0.15 checks the summary against its template (it asks again otherwise): answer with the template's headings.
    const asked = req.messages.map((m) => textOf(m.content)).find((t) => t.includes("You MUST summarize the conversation above")) ?? "";
    const headings = asked.match(/^#{1,4} .+$/gm) ?? ["## Objective"];
    return { text: headings.map((h) => `${h}\n- scripted summary`).join("\n") };
  }
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = lastOf(req, "tool") ?? "";
  const stopped = last.includes("SESSION STOP") || last.includes("SESSION TERMINATED");
  // Parents: hand the marker's child prompt to an executor, then answer.
  const child = /\bCHILD (\S+)/.exec(first)?.[1];
  const parent = child ? undefined : /\bPARENT (\S+)/.exec(first);
  // The budget case's child is a verifier: the budget below is the verifier's, so the other cases' executors run free.
  const target = parent?.[1] === "budget" ? "governance-verifier" : "governance-executor";
  if (parent) return tools === 0 ? subagent(target, `CHILD ${parent[1]}`) : { text: "parent done" };
  if (stopped) return { text: `child ${child} stopped` };
  switch (child) {
    case "inject":
    case "exit":
    case "budget":
      // Distinct commands (the loop guard stays out of it), paced so a test can act between two calls.
      return tools < 120 ? shell(`echo ${child}-output-${tools}`, 150) : { text: "never stopped" };
    case "stuck":
      // One call, then a model that streams forever: only the hard stop's `session.interrupt` ends it.
      return tools === 0 ? shell("echo stuck-once") : { hang: true };
    case "escape":
      return tools === 0 ? { toolCalls: [{ name: "read", args: { path: "PLAN.md" } }] } : { hang: true };
  }
  if ((lastOf(req, "user") ?? "").includes("BIG")) return { text: "a very long answer", usage: { prompt_tokens: 199_500, completion_tokens: 400 } };
  return { text: "ok" };
}

onOpencode2("OpenCode 2 control scenarios, real host", (host) => {
  describe(`OpenCode ${host.version}, real host: inject, hard stop, Escape and resume, compaction, CLI, exit and restart`, () => {
    const { model, project, serve, startServe, stepsOf, events, cli } = e2eHost2(host, {
      respond,
      agents: true,
      // The package-directory route (a clone or an unpacked package listed in `plugins`): 2.0.15 loads the
      // package's root index.js, not its package.json (every case here proves it loaded; without index.js none runs).
      plugin: "none",
      opencodeConfig: { plugins: [REPO_ROOT] },
      files: { "PLAN.md": "# plan\n1. do it\n" },
      governanceYaml: `stop:\n  deadline: ${DEADLINE_MS}ms\n  retryDeadline: 3s\nloops:\n  enabled: false\nbudgets:\n  agents:\n    governance-verifier: { toolCalls: 3 }\nanchors:\n  - { id: ANCHOR-KEEP, text: Keep the public API stable, priority: critical }\n`,
    });
    const record = (id: string) => sessionRecord(project.governanceDir, id);
    /** A root (the coordinator) prompted with the marker, and its child once the child has made `calls` tool calls. */
    const startTree = async (marker: string, calls = 1) => {
      const root = (await serve.api.createSession({ agent: "governance-coordinator" })).id;
      const since = Date.now() - 5;
      await serve.api.prompt(root, `PARENT ${marker}`);
      const child = await waitFor(
        () =>
          allSessionRecords(project.governanceDir).find((r) => r.rootId === root && r.parentId === root && (r.counters?.toolCalls ?? 0) >= calls)?.sessionId as
            | string
            | undefined,
        `the ${marker} child's tool call`,
        30_000,
      );
      return { root, child, since };
    };

    test("the plugin loads from the package directory listed in `plugins` (its root index.js)", async () => {
      const id = (await serve.api.createSession()).id;
      await serve.api.run(id, "HELLO");
      expect(await waitFor(() => events("plugin_started")[0], "plugin_started")).toMatchObject({ host: 2 });
      const plugin = (await serve.api.plugins()).find((p) => p.id === "opencode-governance");
      expect(plugin).toMatchObject({ state: { status: "active" } });
      expect(stepsOf(id)[0]!.system).toContain(PREFIX);
    });

    test("inject from the CLI reaches the running child on its next `shell` result (an error the host's permissions made), sealed, once; then a stop ends it", async () => {
      const { root, child, since } = await startTree("inject");
      const before = stepsOf(child).length;
      const r = await cli("inject", child, "use the staging database, not production");
      expect(r.code, r.stderr).toBe(0);
      const delivered = await waitFor(
        () =>
          stepsOf(child)
            .slice(before)
            .find((q) => (lastOf(q, "tool") ?? "").includes("USER GUIDANCE")),
        "a child step carrying the guidance",
        30_000,
      );
      const text = lastOf(delivered, "tool") ?? "";
      expect(text).toContain("use the staging database, not production");
      // Sealed: the block's heading carries the session's seal, the one the child's system prompt names.
      const seal = /\[(seal:[0-9a-f]{16})\]/.exec(text)?.[1];
      expect(seal, text).toBeDefined();
      expect(delivered.system).toContain(seal!);
      // The executor's own permissions (agents/governance-executor.md: `bash: "*": deny`, which 2.0.15 applies to
      // `shell`) refuse its calls: the guidance rides on the host's error, which follows it.
      expect(text).toContain("Permission denied: shell");
      const next = await waitFor(() => stepsOf(child)[stepsOf(child).indexOf(delivered) + 1], "the step after");
      expect(lastOf(next, "tool")).not.toContain("USER GUIDANCE");
      expect(events("session_injected", child)).toHaveLength(1);
      expect((await cli("stop", child, "--reason", "enough")).code).toBe(0);
      await serve.api.waitIdle(root, since, 45_000);
      expect(record(child)).toMatchObject({ control: "stopped" });
    });

    test("a tool-call budget stops the child on its `shell` results, governance named as the one asking; the parent is told which budget", async () => {
      const { root, child, since } = await startTree("budget");
      await serve.api.waitIdle(root, since, 45_000);
      expect(events("budget_exceeded", child)).toEqual([expect.objectContaining({ key: "toolCalls", scope: "session" })]);
      const stopText = stepsOf(child)
        .map((q) => lastOf(q, "tool") ?? "")
        .find((t) => t.includes("SESSION STOP REQUESTED"));
      expect(stopText).toContain("Budget exceeded:");
      expect(stopText).toContain("Governance (a limit in the project's governance.yaml, not the user) asked you to stop");
      expect(record(child)).toMatchObject({ control: "stopped" });
      const parentAfter = stepsOf(root).at(-1)!;
      expect(parentAfter.messages.map((m) => textOf(m.content)).join("\n")).toContain("Budget exceeded:");
    });

    test('a child whose model streams forever is hard-stopped through `session.interrupt` within deadline + 2 s; the parent is told it was aborted, never "stuck"', async () => {
      const { root, child, since } = await startTree("stuck");
      await waitFor(() => model.requests.some((q) => q.sessionId === child && q.closedAt === undefined && lastOf(q, "tool") !== undefined), "child streaming");
      expect((await cli("stop", child, "--reason", "stuck")).code).toBe(0);
      const stopped = await waitFor(() => (record(child)?.control === "stopped" ? record(child) : undefined), "child stopped", DEADLINE_MS + 20_000);
      // From the moment the plugin took the request (the CLI's own start is not the host's).
      const queued = events("stop_queued", child)[0]!.at as number;
      expect(stopped!.stoppedAt - queued).toBeLessThan(DEADLINE_MS + 2_000);
      await waitFor(() => events("session_stopped", child).length > 0, "stop audited");
      expect(events("session_hard_stopped", child)).toHaveLength(1);
      expect(events("session_stopped", child)).toHaveLength(1);
      await serve.api.waitIdle(root, since, 45_000);
      const told = stepsOf(root)
        .map((q) =>
          q.messages
            .filter((m) => m.role !== "system")
            .map((m) => textOf(m.content))
            .join("\n"),
        )
        .find((t) => t.includes(SUBAGENT_STOPPED_HEADING));
      expect(told, "the parent read that its child was stopped").toBeDefined();
      expect(told).toContain("its turn did not end within the stop's deadline, so it was aborted");
    });

    for (const resume of [undefined, true] as const) {
      test(`Escape of the root (interrupt${resume === undefined ? "" : " resume=true"}): root and child interrupted, none busy; the next prompt brings the resume context naming the child's last call`, async () => {
        const { root, child } = await startTree("escape");
        await waitFor(
          () => model.requests.some((q) => q.sessionId === child && q.closedAt === undefined && lastOf(q, "tool") !== undefined),
          "child thinking after its read",
        );
        await serve.api.interrupt(root, resume);
        for (const id of [root, child]) await waitFor(() => record(id)?.state === "interrupted", `${id} interrupted`, 20_000);
        expect(await waitFor(() => events("session_aborted", root)[0], "the root's abort audited")).toMatchObject({ cause: "user" });
        expect(record(root)!.children.find((c: { sessionId: string }) => c.sessionId === child)).toMatchObject({
          outcome: expect.not.stringMatching(/running/),
        });
        const from = model.requests.length;
        await serve.api.run(root, "where were we?");
        const step = model.requests.slice(from).find((q) => q.kind === "agent" && q.sessionId === root)!;
        const note = statusNote(step) ?? "";
        expect(note).toContain(RESUME);
        expect(step.system).toContain(PREFIX);
        expect(note).toMatch(/governance-executor \(ses_[^)]*\): last tool call `read` "[^"\n]*PLAN\.md/);
      });
    }

    test("compaction through the v2 API: the compaction request carries the anchors, the record counts it once, the next step has the reminder", async () => {
      const id = (await serve.api.createSession()).id;
      await serve.api.run(id, "BIG answer please");
      const from = model.requests.length;
      await serve.api.raw("POST", `/api/session/${id}/compact`, { body: {} }).then((r) => expect(r.status, r.text).toBeLessThan(300));
      const compaction = await waitFor(() => model.requests.slice(from).find((q) => q.kind === "compaction" && q.sessionId === id), "compaction request").catch(
        (e) => {
          console.log(
            JSON.stringify(
              model.requests.slice(from).map((q) => ({
                kind: q.kind,
                s: q.sessionId,
                sys: q.system.slice(0, 300),
                m: q.messages.map((x) => textOf(x.content).slice(0, 300)),
                t: q.tools,
              })),
              null,
              1,
            ),
          );
          throw e;
        },
      );
      expect(compaction.messages.map((m) => textOf(m.content)).join("\n") + compaction.system).toContain("ANCHOR-KEEP");
      await waitFor(() => (record(id)?.counters.compactions ?? 0) >= 1, "compaction recorded");
      await serve.api.run(id, "continue after compaction");
      const next = model.requests.find((q) => q.kind === "agent" && q.sessionId === id && q.index > compaction.index)!;
      expect(statusNote(next)).toContain(REMINDER);
      expect(next.system).toContain(PREFIX);
      expect(record(id)!.counters.compactions).toBe(1);
    });

    test("the CLI on a V2 project: `status` and `sessions` list what the server ran", async () => {
      const status = await cli("status");
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/tool calls gated/);
      const sessions = await cli("sessions", "--all", "--json");
      expect(sessions.code, sessions.stderr).toBe(0);
      const listed = JSON.stringify(JSON.parse(sessions.stdout));
      for (const r of allSessionRecords(project.governanceDir).filter((x) => x.depth === 0)) expect(listed).toContain(r.sessionId);
    });

    test("the process exits mid-run (SIGTERM): the running sessions are released; a new `opencode serve` resumes the root and leaves no lock", async () => {
      const { root, child } = await startTree("exit", 2);
      // 2.0.15 handles SIGTERM itself (exit status 130) and ends the process without waiting for the plugin's last
      // writes: a lock (or a lock's aside copy) may be left, owned by the dead process (docs/decisions/0043). The final
      // states are written first (below); the next process takes such a lock over at once (its owner is gone).
      await serve.stop("SIGTERM");
      for (const id of [root, child])
        expect(events("session_released", id)).toEqual([expect.objectContaining({ cause: "exit", was: "running", now: "interrupted" })]);
      for (const id of [root, child]) expect(record(id)?.state, `${id} released`).toBe("interrupted");
      await startServe();
      const from = model.requests.length;
      await serve.api.run(root, "where were we?");
      const step = model.requests.slice(from).find((q) => q.kind === "agent" && q.sessionId === root)!;
      expect(step.system).toContain(PREFIX);
      expect(statusNote(step) ?? "").toContain(RESUME);
      await waitFor(() => locksLeft(project.governanceDir).length === 0, "the dead process's locks taken over and swept", 20_000);
      expect(events("store_problem")).toEqual([]);
    });
  });
});
