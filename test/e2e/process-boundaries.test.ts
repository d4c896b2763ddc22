import { describe, expect, test } from "vitest";
import {
  auditEvents,
  createTestProject,
  e2eHost,
  firstUser,
  Gate,
  type ModelRequest,
  projectCli,
  type Reply,
  serveOpencode,
  sessionRecord,
  textOf,
  waitFor,
} from "../harness/index.ts";

/**
 * Issue 26, each "Why" bullet on the real `opencode serve` (1.18): what a user sees across a process boundary.
 * 1. Escape, quit (SIGTERM: what quitting does), come back: the interrupted root is still in `resume`, nothing reads
 *    `orphaned`. Before: the next process's sweep ended every root of the quit process `orphaned`.
 * 2. Three `task` calls naming an agent that does not exist, then two valid ones with `concurrency.perParent: 2`:
 *    both valid ones run. Before: "SPAWN REFUSED (concurrency limit)" with no child running.
 * 3. A stopped child's note to its parent, queued while the parent's process quits, reaches the parent's model in
 *    the next process, once. Before: the start-up sweep deleted it.
 * 4. Governance's own L3 abort is audited `cause: stop`, never counted as the user's Escape. Before: `cause: user`.
 * And a spawn slot across turns: a `task` call with `task_id` continues its child (no new session) and counts once.
 *    Before: it counted twice while it ran, so `perProject: 2` refused a second subagent beside it.
 * And a `task_id` naming another session's subagent is refused (OpenCode 1.18 continues any session it is given).
 */
const toolCount = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").length;
const conversation = (req: ModelRequest) => JSON.stringify(req.messages.filter((m) => m.role !== "system"));
const lastUser = (req: ModelRequest) => textOf(req.messages.findLast((m) => m.role === "user")?.content);
const holdGate = new Gate();
const task = (prompt: string, agent: string): Reply => ({ toolCalls: [{ name: "task", args: { description: "work", prompt, subagent_type: agent } }] });

function respond(req: ModelRequest): Reply | Promise<Reply> {
  const first = firstUser(req);
  const tools = toolCount(req);
  if (first.includes("HANG-ROOT")) return { hang: true };
  if (first.includes("TYPO-PARENT")) {
    if (tools < 3) return task("TYPO child", "no-such-agent");
    if (tools < 5) return task("QUICK-CHILD answer", "general");
    return { text: "typos done" };
  }
  if (first.includes("QUICK-CHILD")) return { text: "child answer" };
  // A `task_id` continuation: the child's newest prompt decides; HOLD waits for the test.
  if (first.includes("CONT-CHILD"))
    return lastUser(req).includes("HOLD") ? holdGate.wait().then(() => ({ text: "held work done" })) : { text: "first work done" };
  if (first.includes("CONT-PARENT")) {
    if (!lastUser(req).includes("AGAIN")) return tools === 0 ? task("CONT-CHILD first", "general") : { text: "delegated" };
    const results = req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
    const id = /task_id: (ses_\w+)|<task id="(ses_\w+)"/.exec(results.join("\n"))?.slice(1).find(Boolean);
    if (!id || tools > 1) return { text: "continued" };
    return { toolCalls: [{ name: "task", args: { description: "work", prompt: "HOLD and go on", subagent_type: "general", task_id: id } }] };
  }
  // Another session's subagent, named by its id in the prompt: OpenCode itself would continue it.
  if (first.includes("HIJACK")) {
    const id = /HIJACK (ses_\w+)/.exec(first)?.[1] as string;
    return tools === 0
      ? { toolCalls: [{ name: "task", args: { description: "work", prompt: "obey me", subagent_type: "general", task_id: id } }] }
      : { text: "hijack over" };
  }
  if (first.includes("CONT-OTHER"))
    return tools === 0 ? task(first.includes("HOLD") ? "CONT-CHILD HOLD" : "QUICK-CHILD answer", "general") : { text: "other done" };
  if (first.includes("NOTE-PARENT")) {
    if (tools === 0) return task("STUCK-CHILD think", "governance-executor");
    const again = req.messages.findIndex((m) => m.role === "user" && textOf(m.content).includes("AGAIN"));
    if (again >= 0 && !req.messages.slice(again).some((m) => m.role === "tool")) return { toolCalls: [{ name: "governance", args: { action: "sessions" } }] };
    return { text: "parent continues" };
  }
  if (first.includes("STUCK-CHILD")) return { hang: true };
  if (first.includes("L3-PARENT")) return tools === 0 ? task("LOOP-CHILD work", "governance-executor") : { text: "parent after stop" };
  // Once terminated, the child is mid-answer when governance's abort lands (a model still generating), so OpenCode
  // reports the abort as an aborted message; an abort that lands between two steps is reported by no event at all.
  if (first.includes("LOOP-CHILD")) {
    if (req.messages.some((m) => m.role === "tool" && textOf(m.content).includes("SESSION TERMINATED"))) return { hang: true };
    return { toolCalls: [{ name: "read", args: { filePath: `notes-${tools % 2}.txt` } }] };
  }
  return { text: "done" };
}

const GOVERNANCE_YAML = "concurrency:\n  perParent: 2\nstop:\n  deadline: 60s\n  maxWait: 120s\nloops:\n  enabled: false\n";

describe("across process boundaries (issue 26, real opencode serve)", () => {
  const { model, project, stepsOf } = e2eHost({
    respond,
    agents: true,
    governanceYaml: GOVERNANCE_YAML,
    files: { "PLAN.md": "# plan\n", "notes-0.txt": "even\n", "notes-1.txt": "odd\n" },
    serve: false,
  });

  const json = async (...args: string[]) => {
    const out = await projectCli(project, args);
    expect(out.code, out.stderr).toBe(0);
    return JSON.parse(out.stdout);
  };

  test("Escape, quit, come back: the interrupted root stays in `resume`, no session reads `orphaned`", async () => {
    const a = await serveOpencode(project);
    const escaped = (await a.http.createSession()).id;
    await a.http.promptAsync(escaped, "HANG-ROOT think");
    await waitFor(() => stepsOf(escaped).some((r) => r.closedAt === undefined), "root streaming");
    await a.http.abort(escaped);
    await waitFor(() => sessionRecord(project.governanceDir, escaped)?.state === "interrupted", "interrupted");
    const finished = (await a.http.createSession()).id;
    await a.http.prompt(finished, "plain turn");
    expect((await json("resume", "--json")).resumable.map((s: { sessionId: string }) => s.sessionId)).toContain(escaped);
    await a.stop("SIGTERM");

    const b = await serveOpencode(project);
    const other = (await b.http.createSession()).id;
    await b.http.prompt(other, "plain turn in the new process");
    // The start-up sweep runs behind the first session; give it time to have run.
    await new Promise((r) => setTimeout(r, 3_000));
    const rows = (await json("sessions", "--all", "--json")).sessions as { sessionId: string; status: string }[];
    const status = Object.fromEntries(rows.map((r) => [r.sessionId, r.status]));
    expect({ escaped: status[escaped], finished: status[finished] }).toEqual({ escaped: "interrupted", finished: "idle" });
    expect(rows.filter((r) => r.status === "orphaned")).toEqual([]);
    expect((await json("resume", "--json")).resumable.map((s: { sessionId: string }) => s.sessionId)).toContain(escaped);
    await b.stop("SIGTERM");
  }, 120_000);

  test("three task calls naming an unknown agent do not use up the concurrency slots (perParent 2)", async () => {
    // OpenCode's own agents (no allow-list of governance's): the unknown name reaches OpenCode, which fails the call.
    const plain = createTestProject({ modelUrl: model.url, governanceYaml: GOVERNANCE_YAML });
    const serve = await serveOpencode(plain);
    const parent = await serve.http.run("TYPO-PARENT delegate", { timeoutMs: 60_000 });
    const results = stepsOf(parent)
      .at(-1)!
      .messages.filter((m) => m.role === "tool")
      .map((m) => textOf(m.content));
    expect(results.length).toBe(5);
    expect(results.join("\n")).not.toContain("SPAWN REFUSED");
    expect((await serve.http.children(parent)).length).toBe(2);
    await serve.stop("SIGTERM");
    plain.cleanup();
  }, 120_000);

  test("a `task_id` continuation is one running subagent: with perProject 2, one more spawn runs beside it, a third is refused", async () => {
    const plain = createTestProject({ modelUrl: model.url, governanceYaml: "concurrency:\n  perProject: 2\nloops:\n  enabled: false\n" });
    const serve = await serveOpencode(plain);
    try {
      const parent = (await serve.http.createSession()).id;
      await serve.http.prompt(parent, "CONT-PARENT delegate");
      const child = (await serve.http.children(parent))[0]!.id;
      // Next turn: the parent continues the same child (OpenCode creates no session), and the child waits.
      await serve.http.promptAsync(parent, "AGAIN please");
      await waitFor(() => stepsOf(child).some((r) => r.closedAt === undefined && lastUser(r).includes("HOLD")), "the continued child at work", 60_000);
      const toolResults = (id: string) =>
        stepsOf(id)
          .flatMap((r) => r.messages.filter((m) => m.role === "tool"))
          .map((m) => textOf(m.content));
      // A second session spawns while it runs: 1 running + 1 = 2, allowed (it was refused: the continuation counted twice).
      const other = (await serve.http.createSession()).id;
      await serve.http.promptAsync(other, "CONT-OTHER HOLD delegate");
      await waitFor(
        async () => (await serve.http.children(other)).length === 1 || toolResults(other).length > 0 || undefined,
        "the second spawn decided",
        60_000,
      );
      expect(toolResults(other).join("\n")).not.toContain("SPAWN REFUSED");
      await waitFor(() => holdGate.waiting === 2 || undefined, "both subagents holding", 60_000);
      // A third, with two running: refused, and the refusal counts two.
      const third = (await serve.http.createSession()).id;
      await serve.http.prompt(third, "CONT-OTHER delegate");
      const refusal = toolResults(third).find((t) => t.includes("SPAWN REFUSED"));
      expect(refusal).toContain("The project already has 2 running subagents");
      holdGate.release(2);
      await serve.http.waitIdle([parent, other], 60_000);
      expect((await serve.http.children(parent)).map((c) => c.id)).toEqual([child]);
      expect(
        auditEvents(plain.governanceDir)
          .filter((e) => e.type === "spawn_refused_concurrency")
          .map((e) => e.running),
      ).toEqual([2]);
    } finally {
      holdGate.releaseAll();
      await serve.stop("SIGTERM");
      plain.cleanup();
    }
  }, 180_000);

  test("a `task_id` naming another session's subagent is refused: that subagent is not prompted", async () => {
    const plain = createTestProject({ modelUrl: model.url });
    const serve = await serveOpencode(plain);
    try {
      const parent = (await serve.http.createSession()).id;
      await serve.http.prompt(parent, "CONT-PARENT delegate");
      const child = (await serve.http.children(parent))[0]!.id;
      const before = stepsOf(child).length;
      const other = (await serve.http.createSession()).id;
      await serve.http.prompt(other, `HIJACK ${child}`);
      const results = stepsOf(other)
        .at(-1)!
        .messages.filter((m) => m.role === "tool")
        .map((m) => textOf(m.content));
      expect(results).toHaveLength(1);
      expect(results[0]).toContain("DELEGATION BLOCKED: NOT_YOUR_SUBAGENT");
      expect(results[0]).toContain(child);
      expect(stepsOf(child)).toHaveLength(before);
      expect(await serve.http.children(other)).toEqual([]);
      expect(auditEvents(plain.governanceDir).find((e) => e.type === "delegation_blocked")).toMatchObject({
        sessionId: other,
        kind: "not_own_subagent",
        continues: child,
      });
    } finally {
      await serve.stop("SIGTERM");
      plain.cleanup();
    }
  }, 120_000);

  test("a stopped child's note to its parent survives the parent's process and reaches it once", async () => {
    const a = await serveOpencode(project);
    const parent = (await a.http.createSession()).id;
    await a.http.promptAsync(parent, "NOTE-PARENT delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await a.http.children(parent))[0]?.id, "child", 60_000);
    await waitFor(() => stepsOf(child).some((r) => r.closedAt === undefined), "child streaming", 60_000);
    expect((await projectCli(project, ["stop", child, "--reason", "note test"])).code).toBe(0);
    await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopping", "child stopping", 30_000);
    await a.http.abort(parent); // Escape on the parent: the child is cut off while its stop is pending
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "parent_notified" && e.childId === child), "note queued");
    await a.stop("SIGTERM");

    const b = await serveOpencode(project);
    await new Promise((r) => setTimeout(r, 3_000)); // the start-up sweep
    await b.http.promptAsync(parent, "AGAIN please", { agent: "governance-coordinator" });
    await waitFor(() => stepsOf(parent).some((r) => conversation(r).includes("AGAIN")), "the parent's next turn", 30_000);
    await b.http.waitIdle([parent], 30_000);
    const after = stepsOf(parent).filter((r) => firstUser(r).includes("NOTE-PARENT") && conversation(r).includes("AGAIN"));
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(conversation(after[0]!)).toContain("SUBAGENT STOPPED");
    // Carried by the tool result of that turn, then never again as a new note.
    const last = conversation(after.at(-1)!);
    expect(last.split("SUBAGENT STOPPED").length - 1).toBe(1);
    await b.stop("SIGTERM");
  }, 150_000);

  test("the abort after L3 is governance's: audited `cause: stop`, not the user's Escape", async () => {
    const serve = await serveOpencode(project);
    const parent = (await serve.http.createSession()).id;
    await serve.http.promptAsync(parent, "L3-PARENT delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(parent))[0]?.id, "child", 60_000);
    await waitFor(() => stepsOf(child).length >= 2, "child working");
    expect((await projectCli(project, ["stop", child, "--level", "3", "--reason", "cause test"])).code).toBe(0);
    const aborted = await waitFor(
      () => auditEvents(project.governanceDir).find((e) => e.type === "session_aborted" && e.sessionId === child),
      "child aborted",
      30_000,
    );
    expect(sessionRecord(project.governanceDir, child)?.control).toBe("stopped");
    expect(aborted.cause).toBe("stop");
    await serve.http.waitIdle([parent], 30_000);
    await serve.stop("SIGTERM");
  }, 120_000);
});
