import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import {
  allText,
  auditEvents,
  conversation,
  e2eHost,
  lastOf,
  type ModelRequest,
  patchSessionRecord,
  runOpencode,
  sessionRecord,
  statusNote,
  waitFor,
  waitForRecord,
} from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";
const REMINDER = "## Post-Compaction Context Recovery (opencode-governance)";
const RESUME = "## Resumed Session (opencode-governance)";
const HOUR = 3_600_000;

const GOVERNANCE_YAML = `
language:
  communication: Deutsch
  documents: English
phase: verification
anchors:
  - id: ANCHOR-ESM
    text: Every module is ESM with explicit .ts imports
    priority: critical
`;

/** Markers in the user's text drive the scripted model. */
function respond(req: ModelRequest) {
  if (req.kind === "compaction") return { text: "## Objective\n- scripted summary" };
  const user = lastOf(req, "user") ?? "";
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  if (user.includes("HANG")) return { hang: true as const };
  if (user.includes("SPAWN") && toolResults === 0) {
    return { toolCalls: [{ name: "task", args: { description: "inspect", prompt: "CHILD inspect the readme", subagent_type: "general" } }] };
  }
  if (user.includes("TOOL") && toolResults === 0) return { toolCalls: [{ name: "bash", args: { command: "echo step", description: "one step" } }] };
  if (user.includes("TODOS") && conversation(req).at(-1)?.role === "user") {
    const todos = [
      { id: "1", content: "write the tests", status: "completed", priority: "high" },
      { id: "2", content: "ship it", status: "pending", priority: "medium" },
    ];
    return { toolCalls: [{ name: "todowrite", args: { todos } }] };
  }
  return { text: "done" };
}

describe("session lifecycle in a real opencode serve", () => {
  let sessionId: string;

  const { model, project, serve, stepsOf } = e2eHost({ respond, governanceYaml: GOVERNANCE_YAML });
  beforeAll(async () => {
    sessionId = (await serve.http.createSession()).id;
  });

  test("S1/S3: a new session is recorded and every step carries the prefix with language and phase; a plain turn end is not an interruption", async () => {
    const from = model.requests.length;
    await serve.http.prompt(sessionId, "TOOL please");
    await serve.http.waitIdle([sessionId]);
    const requests = stepsOf(sessionId, from);
    expect(requests.length).toBe(2);
    for (const r of requests) {
      expect(r.system).toContain(PREFIX);
      expect(r.system).toContain("Deutsch");
      expect(r.system).toContain("verification");
    }
    // session.idle ends the turn: S1 → S3, and it is not an interruption.
    const record = await waitForRecord(project.governanceDir, sessionId, (r) => r.state === "between_turn", "record between turns");
    expect(record).toMatchObject({ sessionId, level: 1, depth: 0, parentId: null, control: "active", interruptedAt: null });
    expect(record.lastToolCall).toMatchObject({ tool: "bash" });
    expect(record.firstTool).toBe("bash");
    expect(auditEvents(project.governanceDir).map((e) => e.type)).toContain("plugin_started");
  });

  test("governance runs once per process: OpenCode 1.18 also calls the OpenCode 2 entry (`setup`), which stands aside", async () => {
    // 1.18.33 calls `setup` a few seconds after `server`, once a session is used: prompt, wait past that, then count.
    const s = await serve.http.createSession();
    await serve.http.prompt(s.id, "hello");
    await new Promise((r) => setTimeout(r, 5_000));
    const started = auditEvents(project.governanceDir).filter((e) => e.type === "plugin_started");
    expect(started.map((e) => e.host)).toEqual([1]);
    expect(
      auditEvents(project.governanceDir)
        .filter((e) => e.type === "host_detected")
        .map((e) => e.line),
    ).toEqual([1]);
  });

  test("the status note counts the session's todos from OpenCode's todo events; the system prompt never moves", async () => {
    const from = model.requests.length;
    await serve.http.prompt(sessionId, "TODOS plan the work");
    const steps = stepsOf(sessionId, from);
    expect(steps.length).toBe(2);
    expect(statusNote(steps[0]!) ?? "").not.toContain("**Todos:**");
    expect(statusNote(steps[1]!)).toContain("**Todos:** 1 open of 2.");
    expect(steps[1]!.system).toBe(steps[0]!.system);
    await waitFor(() => sessionRecord(project.governanceDir, sessionId)?.todo?.total === 2, "todo count recorded");
  });

  test("S2: summarize puts anchors and language into the compaction request; the record says compacted; the next step carries the reminder", async () => {
    const from = model.requests.length;
    await serve.http.summarize(sessionId);
    await serve.http.waitIdle([sessionId]);
    const compaction = model.requests.slice(from).find((r) => r.kind === "compaction");
    expect(compaction, "a compaction request reached the model").toBeDefined();
    expect(allText(compaction!)).toContain("ANCHOR-ESM");
    expect(allText(compaction!)).toContain("Deutsch");

    const record = await waitForRecord(project.governanceDir, sessionId, (r) => r.state === "compacted", "compacted record");
    expect(record.compactionHistory).toEqual([expect.objectContaining({ trigger: "summarize" })]);
    expect(record.compactedPending).toBe(true);

    const next = model.requests.length;
    await serve.http.prompt(sessionId, "what next?");
    const step = stepsOf(sessionId, next)[0]!;
    expect(statusNote(step)).toContain(REMINDER);
    expect(statusNote(step)).toContain("ANCHOR-ESM");
    expect(step.system).toContain(PREFIX);
  });

  test("S4: aborting a running session records it interrupted", async () => {
    await serve.http.promptAsync(sessionId, "HANG on this");
    await waitFor(async () => (await serve.http.status())[sessionId]?.type === "busy", "session busy");
    await waitFor(() => model.openStreams() > 0, "model stream open");
    await serve.http.abort(sessionId);
    const record = await waitForRecord(project.governanceDir, sessionId, (r) => r.state === "interrupted", "interrupted record");
    expect(record.interruptedAt).toBeGreaterThan(0);
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "session_aborted" && e.sessionId === sessionId), "audit session_aborted");
  });

  test("S5: continued 2 hours later with opencode run -s, the resume context comes in the status note; at 49 hours it starts fresh", async () => {
    await serve.stop();
    patchSessionRecord(project.governanceDir, sessionId, (r) => {
      r.lastActivityAt -= 2 * HOUR;
      r.updatedAt -= 2 * HOUR;
      r.state = "between_turn";
      r.interruptedAt = null;
    });
    const from = model.requests.length;
    const run = await runOpencode(project, ["-s", sessionId, "carry on"]);
    expect(run.code, run.stderr.slice(-1500)).toBe(0);
    const step = stepsOf(sessionId, from)[0]!;
    expect(statusNote(step)).toContain(RESUME);
    expect(step.system).not.toContain(RESUME);
    expect(step.system).toContain(PREFIX);
    expect(statusNote(step)).toMatch(/2 hours/);
    expect(sessionRecord(project.governanceDir, sessionId)!.counters.resumes).toBe(1);

    patchSessionRecord(project.governanceDir, sessionId, (r) => {
      r.lastActivityAt -= 49 * HOUR;
      r.updatedAt -= 49 * HOUR;
      r.createdAt -= 49 * HOUR;
    });
    const again = model.requests.length;
    const run2 = await runOpencode(project, ["-s", sessionId, "and again"]);
    expect(run2.code, run2.stderr.slice(-1500)).toBe(0);
    const fresh = stepsOf(sessionId, again)[0]!;
    expect(fresh.system).toContain(PREFIX);
    expect(allText(fresh)).not.toContain(RESUME);
    const record = sessionRecord(project.governanceDir, sessionId)!;
    expect(record.counters.resumes).toBe(0);
    // The start-up sweep archived the stale record (kept, not deleted), so the session began again as S1.
    const archived = fs.readdirSync(path.join(project.governanceDir, "archive")).filter((f) => f.startsWith(sessionId));
    expect(archived.length).toBe(1);
    expect(auditEvents(project.governanceDir).filter((e) => e.type === "session_created" && e.sessionId === sessionId).length).toBe(2);
  });
});
