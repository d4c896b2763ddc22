import { describe, expect, test } from "vitest";
import {
  allText,
  auditEvents,
  conversation,
  createTestProject,
  e2eHost,
  lastOf,
  type ModelRequest,
  patchSessionRecord,
  type Reply,
  runOpencode,
  serveOpencode,
  sessionRecord,
  startScriptedModel,
  statusNote,
  textOf,
  waitFor,
  waitForRecord,
} from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";
const RESUME = "## Resumed Session (opencode-governance)";
const REMINDER = "## Post-Compaction Context Recovery (opencode-governance)";
const HOUR = 3_600_000;

function respond(req: ModelRequest): Reply {
  if (req.kind === "compaction") return { text: "## Objective\n- scripted summary" };
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = conversation(req).at(-1)?.role;
  if (first.includes("ESCAPE-ME") && last === "user" && tools === 0) {
    return { toolCalls: [{ name: "task", args: { description: "slow work", prompt: "SLOW-WORKER read then think", subagent_type: "governance-executor" } }] };
  }
  if (first.includes("SLOW-WORKER")) {
    if (tools === 0) return { toolCalls: [{ name: "read", args: { filePath: "PLAN.md" } }] };
    if (last === "tool") return { hang: true };
  }
  // Four tool calls before the big answer: the reminder after compaction lists the last three (S2-R03, seed 003-13).
  if ((lastOf(req, "user") ?? "").includes("BIG") && tools < 4)
    return { toolCalls: [{ name: "bash", args: { command: `echo ACTION-${tools + 1}`, description: `action ${tools + 1}` } }] };
  if ((lastOf(req, "user") ?? "").includes("BIG")) return { text: "a very long answer", usage: { prompt_tokens: 199_500, completion_tokens: 400 } };
  return { text: "continuing" };
}

describe("Escape, then resume: the resume context says what was cut off; a subagent never gets it (S5-R08)", () => {
  const { model, project } = e2eHost({ respond, agents: true, files: { "PLAN.md": "# plan\n1. do it\n" }, serve: false });

  test("interrupted root and child, resumed 2 h later", async () => {
    const serve = await serveOpencode(project);
    let root = "";
    let child = "";
    try {
      root = (await serve.http.createSession()).id;
      await serve.http.promptAsync(root, "ESCAPE-ME delegate", { agent: "governance-coordinator" });
      child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child");
      await waitFor(
        () => model.requests.some((r) => r.sessionId === child && r.closedAt === undefined && conversation(r).at(-1)?.role === "tool"),
        "child thinking after its read",
      );
      await serve.http.abort(root); // the user pressed Escape
      await waitFor(() => sessionRecord(project.governanceDir, child)?.state === "interrupted", "child interrupted");
      await waitFor(() => sessionRecord(project.governanceDir, root)?.state === "interrupted", "root interrupted");
    } finally {
      await serve.stop();
    }
    expect(sessionRecord(project.governanceDir, child)!.lastToolCall).toMatchObject({ tool: "read" });

    for (const id of [root, child]) {
      patchSessionRecord(project.governanceDir, id, (r) => {
        r.lastActivityAt -= 2 * HOUR;
        r.updatedAt -= 2 * HOUR;
      });
    }
    const from = model.requests.length;
    const run = await runOpencode(project, ["-s", root, "--agent", "governance-coordinator", "where were we?"]);
    expect(run.code, run.stderr.slice(-1500)).toBe(0);
    const step = model.requests.slice(from).find((r) => r.kind === "agent" && r.sessionId === root)!;
    const note = statusNote(step) ?? "";
    expect(note).toContain(RESUME);
    expect(step.system).toContain(PREFIX);
    expect(step.system).not.toContain(RESUME);
    expect(note).toMatch(/interrupted/i);
    expect(note).toContain("governance-executor");
    expect(note).toMatch(/governance-executor \(ses_[^)]*\): last tool call `read` "[^"\n]*PLAN\.md/);
    expect(note).toContain("PLAN.md");

    const before = model.requests.length;
    const runChild = await runOpencode(project, ["-s", child, "continue your part"]);
    expect(runChild.code, runChild.stderr.slice(-1500)).toBe(0);
    const childStep = model.requests.slice(before).find((r) => r.kind === "agent" && r.sessionId === child)!;
    expect(childStep.system).toContain(PREFIX);
    expect(allText(childStep)).not.toContain(RESUME);
    expect(sessionRecord(project.governanceDir, child)!.level).toBe(2);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "resume_context_skipped" && e.sessionId === child)).toBe(true);
  });
});

describe("automatic compaction forced by a large reported usage", () => {
  test("the compaction request carries the anchors; the record says compacted; the next step has the reminder with the last three actions", async () => {
    const model = await startScriptedModel(respond);
    const project = createTestProject({
      modelUrl: model.url,
      governanceYaml: "anchors:\n  - { id: ANCHOR-KEEP, text: Keep the public API stable, priority: critical }\n",
    });
    const serve = await serveOpencode(project);
    try {
      const id = (await serve.http.createSession()).id;
      await serve.http.prompt(id, "BIG answer please");
      await serve.http.prompt(id, "and now?");
      const compaction = await waitFor(() => model.requests.find((r) => r.kind === "compaction" && r.sessionId === id), "automatic compaction request");
      expect(allText(compaction)).toContain("ANCHOR-KEEP");
      const record = await waitForRecord(project.governanceDir, id, (r) => r.compactionHistory.length > 0, "compaction recorded");
      expect(record.counters.compactions).toBeGreaterThanOrEqual(1);
      await waitFor(() => sessionRecord(project.governanceDir, id)?.compactionHistory[0]?.trigger === "auto", "recorded as automatic");
      await serve.http.waitIdle([id]);
      const after = model.requests.filter((r) => r.kind === "agent" && r.sessionId === id && r.index > compaction.index);
      if (after.length === 0) await serve.http.prompt(id, "continue after compaction");
      const next = model.requests.find((r) => r.kind === "agent" && r.sessionId === id && r.index > compaction.index)!;
      expect(statusNote(next)).toContain(REMINDER);
      // The last three actions, in order; the first of the four is gone.
      const reminder = statusNote(next)!.slice(statusNote(next)!.indexOf(REMINDER));
      expect(reminder).toMatch(/\*\*Last 3 actions:\*\*\n1\. bash[^\n]*ACTION-2[^\n]*\n2\. bash[^\n]*ACTION-3[^\n]*\n3\. bash[^\n]*ACTION-4/);
      expect(reminder).not.toContain("ACTION-1");
      // Recorded once, although both the autocontinue hook and the session.compacted event report it.
      await serve.http.waitIdle([id]);
      expect(sessionRecord(project.governanceDir, id)!.counters.compactions).toBe(1);
    } finally {
      await serve.stop();
      await model.close();
      project.cleanup();
    }
  });
});

describe("orphans: children left running by a crashed process", () => {
  test("when the parent resumes, a child with no tool call for 10 minutes and not busy is closed as orphaned and reported", async () => {
    const model = await startScriptedModel(respond);
    const project = createTestProject({ modelUrl: model.url, agents: true, files: { "PLAN.md": "# plan\n" } });
    try {
      const serve = await serveOpencode(project);
      const root = (await serve.http.createSession()).id;
      await serve.http.promptAsync(root, "ESCAPE-ME delegate", { agent: "governance-coordinator" });
      const child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child");
      await waitFor(() => sessionRecord(project.governanceDir, child)?.lastToolCall?.tool === "read", "child made a tool call");
      await serve.crash(); // no abort, no idle: the records still say the child is running
      const parent = sessionRecord(project.governanceDir, root)!;
      expect(parent.children[0]).toMatchObject({ sessionId: child, outcome: "running" });

      for (const id of [root, child]) {
        patchSessionRecord(project.governanceDir, id, (r) => {
          r.lastActivityAt -= 11 * 60_000;
          r.updatedAt -= 11 * 60_000;
          r.createdAt -= 11 * 60_000;
          if (r.lastToolCall) r.lastToolCall.at -= 11 * 60_000;
        });
      }
      const from = model.requests.length;
      const run = await runOpencode(project, ["-s", root, "--agent", "governance-coordinator", "status?"]);
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
      const step = model.requests.slice(from).find((r) => r.kind === "agent" && r.sessionId === root)!;
      expect(statusNote(step)).toMatch(/orphan/i);
      expect(statusNote(step)).toContain(child.slice(0, 12));
      expect(step.system).not.toMatch(/orphan/i);
      expect(sessionRecord(project.governanceDir, child)!.control).toBe("orphaned");
      expect(sessionRecord(project.governanceDir, root)!.children[0]).toMatchObject({ outcome: "orphaned" });
      // Reported by whichever path closed it first: the parent's orphan check (`orphan_closed`, stale and not busy) or
      // the start's crash recovery behind it (`session_ended` orphaned: its host process is gone). Both race at the
      // new process's start; under load the recovery can win, and the check then finds no running link to close.
      const reported = auditEvents(project.governanceDir).filter(
        (e) => e.sessionId === child && (e.type === "orphan_closed" || (e.type === "session_ended" && e.how === "orphaned")),
      );
      expect(reported.length).toBeGreaterThan(0);
    } finally {
      await model.close();
      project.cleanup();
    }
  });
});
