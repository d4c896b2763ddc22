import { beforeAll, describe, expect, test } from "vitest";
import { missing } from "../harness/system-tools.ts";
import {
  allText,
  auditEvents,
  conversation,
  e2eFakeClock,
  e2eHost,
  type ModelRequest,
  type Reply,
  sessionRecord,
  statusNote,
  textOf,
  waitFor,
} from "../harness/index.ts";

/**
 * Issue 21 item 1: resume in a process that stays up. ONE `opencode serve` hosts the session for the whole file; its
 * wall clock is moved with libfaketime (Debian `faketime`, installed by `npm test` when it can: scripts/test-prerequisites.ts): LD_PRELOAD of libfaketime into the
 * Bun binary, an offset in a timestamp file that the running process re-reads on every clock read
 * (FAKETIME_NO_CACHE=1), the monotonic clock left alone (FAKETIME_DONT_FAKE_MONOTONIC=1) so timers and timeouts
 * behave. Nothing is patched on disk: OpenCode and the plugin both see the later time, as after a real lunch break.
 */

const RESUME = "## Resumed Session (opencode-governance)";
const PREFIX = "## Governance Context (opencode-governance)";

/** Driven by the turn's own prompt (the session has earlier turns): its marker, and the tool results since it. */
function respond(req: ModelRequest): Reply {
  const messages = conversation(req);
  const at = messages.findLastIndex((m) => m.role === "user");
  const user = textOf(messages[at]?.content);
  const tools = messages.slice(at + 1).filter((m) => m.role === "tool").length;
  if (user.includes("ESCAPE-ME") && tools === 0) {
    return { toolCalls: [{ name: "task", args: { description: "slow work", prompt: "SLOW-WORKER read then think", subagent_type: "governance-executor" } }] };
  }
  if (user.includes("SLOW-WORKER") && tools === 0) return { toolCalls: [{ name: "read", args: { filePath: "PLAN.md" } }] };
  if (user.includes("SLOW-WORKER") && tools === 1) return { hang: true };
  return { text: "continuing" };
}

const SKIP = missing("faketime");
describe.skipIf(SKIP !== "")(SKIP || "resume on the next prompt in one long-lived opencode serve (wall clock moved by libfaketime)", () => {
  const clock = e2eFakeClock();
  const { model, project, serve, stepsOf } = e2eHost({
    respond,
    agents: true,
    files: { "PLAN.md": "# plan\n1. do it\n" },
    serveEnv: () => clock.env(),
    timeoutMs: 60_000,
  });
  let root = "";
  let child = "";

  const later = clock.later;

  beforeAll(async () => {
    root = (await serve.http.createSession()).id;
  });

  test("the served process really runs on the moved clock (libfaketime honoured by the Bun binary)", async () => {
    await serve.http.prompt(root, "hello", { agent: "governance-coordinator" });
    later(3);
    await serve.http.prompt(root, "still there?", { agent: "governance-coordinator" });
    // The plugin stamps the session's activity with the process's clock: about 3 h ahead of this test's clock.
    await waitFor(() => (sessionRecord(project.governanceDir, root)?.lastActivityAt ?? 0) > Date.now() + 3 * 3_600_000 - 60_000, "activity stamped 3 h ahead");
  });

  test("idle for 2 h with the process up: the next prompt brings the resume context, once, and only for that turn", async () => {
    await waitFor(
      () => sessionRecord(project.governanceDir, root)?.state === "resumed" || sessionRecord(project.governanceDir, root)?.state === "between_turn",
      "turn ended",
    );
    const resumesBefore = sessionRecord(project.governanceDir, root)!.counters.resumes;
    later(2);
    const from = model.requests.length;
    await serve.http.prompt(root, "back from lunch", { agent: "governance-coordinator" });
    const step = stepsOf(root, from)[0]!;
    // Where it goes is issue 16's concern (the status note, test/e2e/prompt-cache.test.ts); here: that it comes.
    expect(allText(step)).toContain(RESUME);
    expect(statusNote(step)).toMatch(/2 hours/);
    expect(step.system).toContain(PREFIX);
    await waitFor(() => sessionRecord(project.governanceDir, root)?.counters.resumes === resumesBefore + 1, "resume counted");
    // Within the hour: the next prompt is a plain continuation.
    const next = model.requests.length;
    await serve.http.prompt(root, "and now?", { agent: "governance-coordinator" });
    expect(allText(stepsOf(root, next)[0]!)).not.toContain(RESUME);
  });

  test("after Escape the next prompt names the interrupted subagent and its last tool call; the subagent never gets a resume context", async () => {
    await serve.http.promptAsync(root, "ESCAPE-ME delegate", { agent: "governance-coordinator" });
    child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child");
    await waitFor(
      () => model.requests.some((r) => r.sessionId === child && r.closedAt === undefined && conversation(r).at(-1)?.role === "tool"),
      "child thinking",
    );
    await serve.http.abort(root); // the user pressed Escape
    await waitFor(() => sessionRecord(project.governanceDir, child)?.state === "interrupted", "child interrupted");
    await waitFor(async () => !(await serve.http.status())[root], "root idle");

    const from = model.requests.length;
    await serve.http.prompt(root, "where were we?", { agent: "governance-coordinator" });
    const resumed = stepsOf(root, from)[0]!;
    expect(allText(resumed)).toContain(RESUME);
    const note = statusNote(resumed) ?? "";
    expect(note).toMatch(/interrupted/i);
    expect(note).toContain(child);
    expect(note).toContain("governance-executor");
    expect(note).toMatch(/last tool call `read`.*PLAN\.md/);
  });

  // Skipped until issue 43 (a run once saw no model request of the child's new prompt, cause not found); it runs again
  // and passes on 1.18.33. S5-R08 is also proven in-process (test/governance/session/session-machine-prompt.test.ts).
  test("a subagent prompted again 2 h later in the same process never gets a resume context (S5-R08)", async () => {
    later(2);
    const childFrom = model.requests.length;
    await serve.http.prompt(child, "continue your part");
    const childStep = stepsOf(child, childFrom)[0]!;
    expect(childStep.system).toContain(PREFIX);
    expect(allText(childStep)).not.toContain(RESUME);
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "resume_context_skipped" && e.sessionId === child), "S5-R08 audited");
  });

  test("a day under one phase: the root's status note carries the phase check line its model reads (S1 stale state, seed 003-08)", async () => {
    await waitFor(async () => !(await serve.http.status())[root], "root idle");
    // The root's phase (the default, `implementation`) was noted at its first prompt; the clock is now 25 h past it.
    later(25 - clock.offsetHours());
    const from = model.requests.length;
    await serve.http.prompt(root, "what next?", { agent: "governance-coordinator" });
    const note = statusNote(stepsOf(root, from)[0]!) ?? "";
    expect(note).toMatch(/\*\*Phase check:\*\* the project phase has been implementation for (?:1 day|2[45] hours?)/);
    expect(note).toContain("ask the user to update `phase` in .opencode/governance.yaml");
    await waitFor(
      () => auditEvents(project.governanceDir).some((e) => e.type === "state_stale" && e.sessionId === root && e.kind === "phase"),
      "state_stale audited",
    );
  });

  test("49 h later, still the same process: the next prompt starts the session fresh (no resume context, old record archived)", async () => {
    await waitFor(async () => !(await serve.http.status())[root], "root idle");
    later(49);
    const from = model.requests.length;
    await serve.http.prompt(root, "a new day", { agent: "governance-coordinator" });
    const step = stepsOf(root, from)[0]!;
    expect(allText(step)).not.toContain(RESUME);
    expect(step.system).toContain(PREFIX);
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "session_expired" && e.sessionId === root), "session_expired audited");
    const record = sessionRecord(project.governanceDir, root)!;
    expect(record.counters.resumes).toBe(0);
    expect(record.createdAt).toBeGreaterThan(Date.now() + 48 * 3_600_000);
  });
});
