import { afterAll, describe, expect, test } from "vitest";
import { auditEvents, e2eHost, Gate, type ModelRequest, projectCli, type Reply, textOf, toolTexts, waitFor, waitForRecord } from "../harness/index.ts";

/**
 * Issue 21 items 2 and 6 on the real `opencode serve`: a subagent that obeys a stop by writing its summary is not cut
 * off mid-answer, one that goes quiet after the directive is still hard-stopped, an Escape during a pending stop is
 * reported as the user's, and the parent's note survives past the one model request it was first attached to.
 */
/** Long enough that the child's next tool call (which carries L1) comes before it on a loaded 2-core machine. */
const DEADLINE_MS = 6_000;
/** The summary streams for 2.5 deadlines: a fixed deadline would cut it off. */
const SUMMARY_MS = 2.5 * DEADLINE_MS;
const LONG = 150_000;
const GOVERNANCE_YAML = `stop:\n  deadline: ${DEADLINE_MS}ms\n  retryDeadline: 3s\n  maxWait: 45s\n`;
const NOTE = "SUBAGENT STOPPED";

const conversation = (req: ModelRequest) => JSON.stringify(req.messages.filter((m) => m.role !== "system"));
const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe("graceful stop and the parent's note (real opencode serve)", () => {
  const gates = new Map<string, Gate>();
  const sawNote = new Set<string>();
  const gateOf = (id: string | undefined): Gate => {
    const key = id ?? "?";
    if (!gates.has(key)) gates.set(key, new Gate());
    return gates.get(key)!;
  };

  /**
   * Parent: delegates with the marker in its prompt; after the task result it reads a file once, then answers.
   * Child: reads, then waits on its gate before each further read; once a stop directive reached it, it does what
   * its marker says (streams a long summary, or goes silent).
   */
  function respond(req: ModelRequest): Reply | Promise<Reply> {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = toolTexts(req);
    if (first.startsWith("PARENT TWICE")) return twice(req, tools);
    const mode = /GRACE-(SUMMARY|SILENT|ESCAPE)/.exec(first)?.[1];
    if (first.startsWith("PARENT") && mode) {
      if (tools.length === 0) {
        const prompt = `CHILD GRACE-${mode} work until told to stop`;
        return { toolCalls: [{ name: "task", args: { description: "work", prompt, subagent_type: "governance-executor" } }] };
      }
      // After its task result it reads on (a line further each time) until the note has reached it, at most 8 steps:
      // a note queued after the task returned (an Escape's) arrives with a later step.
      // Once it has seen the note it reads one line more, so a later step shows whether the note stayed.
      const noted = req.messages.some((m) => m.role !== "system" && textOf(m.content).includes(NOTE));
      const readOn = { toolCalls: [{ name: "read", args: { filePath: `${project.dir}/after.txt`, offset: tools.length, limit: 1 } }] };
      if (!noted) return tools.length <= 8 ? readOn : { text: "parent done without the note" };
      if (!sawNote.has(req.sessionId ?? "")) {
        sawNote.add(req.sessionId ?? "");
        return readOn;
      }
      return { text: "parent done" };
    }
    if (first.includes("CHILD") && mode) {
      const last = tools.at(-1) ?? "";
      if (last.includes("SESSION STOP")) {
        const summary = `Summary: ${"I did the reading and stopped as asked. ".repeat(8)}END-OF-SUMMARY`;
        if (mode === "SUMMARY") return { text: summary, streamMs: SUMMARY_MS };
        if (mode === "ESCAPE") return { text: summary, streamMs: 30_000 };
        return { hang: true, silent: true };
      }
      return (tools.length > 0 ? gateOf(req.sessionId).wait() : Promise.resolve()).then(() => ({
        toolCalls: [{ name: "read", args: { filePath: `${project.dir}/notes.txt` } }],
      }));
    }
    return { text: "ok" };
  }

  /** The TWICE parent's step after its second turn's task result. */
  const secondResults: ModelRequest[] = [];
  /**
   * Turn 1 delegates a child the test stops; the step after its task result answers once it shows the note (a step
   * without it waits for the note to be queued, then fails with a 503 so OpenCode's retry shows it). Turn 2 ("AGAIN")
   * delegates a child that completes, then answers.
   */
  async function twice(req: ModelRequest, tools: string[]): Promise<Reply> {
    const users = req.messages.filter((m) => m.role === "user");
    const again = textOf(users.at(-1)?.content).includes("AGAIN");
    const sinceUser = req.messages.slice(req.messages.lastIndexOf(users.at(-1)!)).filter((m) => m.role === "tool").length;
    if (sinceUser === 0) {
      const prompt = again ? "CHILD DONE finish at once" : "CHILD GRACE-SILENT work until told to stop";
      return { toolCalls: [{ name: "task", args: { description: "work", prompt, subagent_type: "governance-executor" } }] };
    }
    if (again) {
      secondResults.push(req);
      return { text: "turn 2 done" };
    }
    if (conversation(req).includes(NOTE)) return { text: `turn 1 done after ${tools.length} results` };
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "parent_notified" && e.sessionId === req.sessionId), "note queued", 30_000);
    return { httpError: 503, message: "retry to read the note" };
  }

  const { project, serve, stepsOf } = e2eHost({
    respond,
    agents: true,
    governanceYaml: GOVERNANCE_YAML,
    files: { "notes.txt": "notes-output\n", "after.txt": Array.from({ length: 20 }, (_, i) => `after-output ${i + 1}`).join("\n") },
  });
  afterAll(async () => {
    for (const g of gates.values()) g.releaseAll();
  });

  const childEvents = (child: string) => auditEvents(project.governanceDir).filter((e) => e.sessionId === child);

  async function start(mode: "SUMMARY" | "SILENT" | "ESCAPE"): Promise<{ parent: string; child: string }> {
    const parent = (await serve.http.createSession()).id;
    await serve.http.promptAsync(parent, `PARENT GRACE-${mode}`, { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(parent))[0]?.id, "child session", 60_000);
    await waitFor(() => stepsOf(child).length >= 2, "child at its second step", 60_000);
    return { parent, child };
  }

  async function stopAndReleaseOneCall(child: string): Promise<number> {
    const r = await projectCli(project, ["stop", child, "--reason", "enough"]);
    expect(r.code, r.stderr).toBe(0);
    await waitForRecord(project.governanceDir, child, (rec) => rec.control === "stopping", "stopping");
    const base = stepsOf(child).length;
    gateOf(child).release(); // one more tool call: its result carries L1
    const afterL1 = await waitFor(() => stepsOf(child)[base], "the child's step after L1");
    expect(toolTexts(afterL1).at(-1)).toContain("SESSION STOP REQUESTED");
    return afterL1.receivedAt;
  }

  /**
   * The parent's requests from the first that shows the note: from there on each shows it exactly once, wherever it
   * sits (issue 21 item 6), and none before it does.
   */
  async function parentAfterTask(parent: string) {
    await serve.http.waitIdle([parent], 30_000);
    const after = stepsOf(parent).filter((r) => toolTexts(r).length >= 1);
    const first = after.findIndex((r) => count(conversation(r), NOTE) > 0);
    expect(first, "a parent step after its task result shows the note").toBeGreaterThanOrEqual(0);
    for (const r of after.slice(0, first)) expect(count(conversation(r), NOTE)).toBe(0);
    const noted = after.slice(first);
    for (const r of noted) expect(count(conversation(r), NOTE), "the note, once per request").toBe(1);
    expect(noted.length, "the parent's steps from the note on").toBeGreaterThanOrEqual(2);
    return noted;
  }

  test(
    "L1 at once, then a summary streamed for three deadlines: not cut off; stopped as compliance; the parent reads all of it and 'stopped as asked'",
    async () => {
      const { parent, child } = await start("SUMMARY");
      await stopAndReleaseOneCall(child);
      const record = await waitForRecord(project.governanceDir, child, (r) => r.control === "stopped", "child stopped", 30_000);
      const trace = childEvents(child).map((e) => `${e.type} ${JSON.stringify(e)}`);
      expect(
        childEvents(child).some((e) => e.type === "session_hard_stopped"),
        trace.join("\n"),
      ).toBe(false);
      expect(await waitFor(() => childEvents(child).find((e) => e.type === "session_stopped"), "audit session_stopped")).toMatchObject({ how: "compliance" });
      expect(record.stop.delivered).toEqual([1]);
      const after = await parentAfterTask(parent);
      expect(toolTexts(after[0]!)[0]).toContain("END-OF-SUMMARY"); // the whole summary came back as the task result
      expect(conversation(after[0]!)).toContain("It stopped as asked");
    },
    LONG,
  );

  test(
    "L1, then silence (no output, no tool call): hard-stopped one deadline after its last sign of life; the parent keeps the note on every later step, once",
    async () => {
      const { parent, child } = await start("SILENT");
      const lastLife = await stopAndReleaseOneCall(child);
      const record = await waitForRecord(project.governanceDir, child, (r) => r.control === "stopped", "child stopped", 30_000);
      const hard = childEvents(child).find((e) => e.type === "session_hard_stopped");
      const trace = childEvents(child)
        .map((e) => `${e.at - lastLife} ${e.type}`)
        .join("\n");
      expect(hard, trace).toBeDefined();
      expect(hard!.at - lastLife, trace).toBeGreaterThanOrEqual(DEADLINE_MS - 500);
      expect(record.stoppedAt - lastLife).toBeLessThan(DEADLINE_MS + 5_000);
      const after = await parentAfterTask(parent);
      expect(conversation(after[0]!)).toContain("its turn did not end within the stop's deadline, so it was aborted");
    },
    LONG,
  );

  test(
    "an Escape (an abort governance did not send) while it writes its summary reads as the user's, not as 'made no tool call'",
    async () => {
      const { parent, child } = await start("ESCAPE");
      const l1 = await stopAndReleaseOneCall(child); // it writes its summary slowly: the stop stays pending
      await waitFor(() => Date.now() - l1 > 1_000, "a second into its summary");
      await serve.http.abort(child);
      await waitForRecord(project.governanceDir, child, (rec) => rec.control === "stopped", "child stopped", 20_000);
      const stopped = await waitFor(() => childEvents(child).find((e) => e.type === "session_stopped"), "audit session_stopped");
      expect(
        stopped,
        childEvents(child)
          .map((e) => `${e.at - l1} ${e.type}`)
          .join("\n"),
      ).toMatchObject({ how: "user-abort" });
      expect(childEvents(child).some((e) => e.type === "session_hard_stopped")).toBe(false);
      const after = await parentAfterTask(parent);
      expect(conversation(after[0]!)).toContain("The user interrupted it (Escape) while the stop was pending");
    },
    LONG,
  );

  test(
    "a stop note the parent read in turn 1 is delivered once: turn 2's delegation result (a child that completed) carries none",
    async () => {
      const parent = (await serve.http.createSession()).id;
      await serve.http.promptAsync(parent, "PARENT TWICE", { agent: "governance-coordinator" });
      const child = await waitFor(async () => (await serve.http.children(parent))[0]?.id, "child session", 60_000);
      await waitFor(() => stepsOf(child).length >= 2, "child at its second step", 60_000);
      // L3 at its next call: the child is aborted, so the parent's `task` comes back cancelled (a tool error, which no
      // tool result of governance carries) and the note reaches the parent on its next model step only (walk 4).
      const r = await projectCli(project, ["stop", child, "--level", "3", "--reason", "turn one stop"]);
      expect(r.code, r.stderr).toBe(0);
      await waitForRecord(project.governanceDir, child, (rec) => rec.control === "stopping", "stopping");
      gateOf(child).release();
      await waitForRecord(project.governanceDir, child, (rec) => rec.control === "stopped", "child stopped", 30_000);
      await serve.http.waitIdle([parent], 30_000);
      expect(
        stepsOf(parent).some((r) => conversation(r).includes(NOTE)),
        "turn 1 showed the note",
      ).toBe(true);
      await serve.http.promptAsync(parent, "AGAIN delegate once more", { agent: "governance-coordinator" });
      await waitFor(() => secondResults[0], "turn 2's step after its task result", 60_000);
      await serve.http.waitIdle([parent], 30_000);
      const result = toolTexts(secondResults[0]!).at(-1) ?? "";
      expect(result).toContain("ok");
      expect(result, "turn 2's task result").not.toContain(NOTE);
    },
    LONG,
  );
});
