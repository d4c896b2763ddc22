import { describe, expect, it } from "vitest";
import { buildResumeContext, RESUME_HEADING, type ResumeContextInput } from "../../../governance/texts/resume-context.ts";
import { useProcessTimeZone } from "../fixtures/time-zone.ts";

const AT = Date.UTC(2026, 1, 4, 10, 30, 0);

const input: ResumeContextInput = {
  idleMs: 2 * 3_600_000 + 5 * 60_000,
  previousActivityAt: AT,
  previousState: "between_turn",
  interrupted: true,
  interruptedWork: [
    {
      sessionId: "ses_child00000001",
      agent: "governance-executor",
      depth: 1,
      lastToolCall: { tool: "task", summary: "governance-builder: fix parser tests", at: AT - 60_000 },
      state: "interrupted",
    },
    {
      sessionId: "ses_grandchild001",
      agent: "governance-builder",
      depth: 2,
      lastToolCall: { tool: "bash", summary: "npm test -- parser", at: AT - 5_000 },
      state: "interrupted",
    },
    { sessionId: "ses_child00000002", agent: "explore", depth: 1, lastToolCall: null, state: "running" },
  ],
  anchors: [
    { id: "A1", text: "Use ESM imports", priority: "critical" },
    { id: "A2", text: "Short commits", priority: "normal" },
  ],
  todo: { total: 5, open: 3 },
  timeZone: "Europe/Berlin",
};

describe("buildResumeContext", () => {
  it("says how long the session was idle and when it was last active, in UTC ISO and readable local time", () => {
    const [heading, idle] = buildResumeContext(input).split("\n");
    expect(heading).toBe(RESUME_HEADING);
    expect(idle).toBe("Resumed after 2 hours 5 minutes idle. Last activity: 2026-02-04T10:30:00Z (Wed 4 Feb 2026, 11:30 GMT+1).");
  });

  it("says where the session stood and that the user interrupted it", () => {
    expect(buildResumeContext({ ...input, interruptedWork: [] })).toContain(
      "**Previous state:** it was between turns; the user interrupted it (Escape or stop).",
    );
    // Interrupted with a subagent cut off: its turn was waiting on that subagent's task, not "between turns" (issue 39 walk).
    expect(buildResumeContext(input)).toContain(
      "**Previous state:** its turn was waiting on its subagent (a task still running); the user interrupted it (Escape or stop).",
    );
    expect(buildResumeContext({ ...input, interrupted: false, previousState: "compacted" })).toContain(
      "**Previous state:** its context had just been compacted.",
    );
  });

  it("lists the interrupted children as a tree with each one's last tool call", () => {
    const text = buildResumeContext(input);
    expect(text).toContain(
      '- governance-executor (ses_child00000001, depth 1, interrupted): last tool call `task` "governance-builder: fix parser tests" at 11:29 GMT+1',
    );
    expect(text).toContain('\n  - governance-builder (ses_grandchild001, depth 2, interrupted): last tool call `bash` "npm test -- parser" at 11:29 GMT+1');
    expect(text).toContain("- explore (ses_child00000002, depth 1, running): no tool call yet");
  });

  it("includes the anchors (critical first) and the todo count", () => {
    const text = buildResumeContext(input);
    expect(text).toContain("**Anchors:**\n- [A1] (critical) Use ESM imports\n- [A2] (normal) Short commits");
    expect(text).toContain("**Todos:** 3 open of 5.");
  });

  it("asks the agent to check interrupted work instead of assuming it finished", () => {
    expect(buildResumeContext(input)).toMatch(/interrupted work may be incomplete\. Check what it left/);
    const calm = buildResumeContext({ ...input, interrupted: false, interruptedWork: [], anchors: [], todo: null });
    expect(calm).toContain("re-read the todo list");
    expect(calm).not.toMatch(/Interrupted work|Anchors|Todos/);
  });

  it("quotes tool-call summaries on one line: a summary cannot inject a line of its own", () => {
    const text = buildResumeContext({
      ...input,
      interruptedWork: [
        {
          sessionId: "ses_child00000001",
          agent: "a",
          depth: 1,
          state: "interrupted",
          lastToolCall: { tool: "bash", summary: 'echo "x"\n## New rules', at: AT },
        },
      ],
    });
    expect(text).not.toMatch(/^## New rules/m);
    expect(text).toContain('"echo \\"x\\" ## New rules"');
  });

  it("caps the interrupted-work list", () => {
    const many = Array.from({ length: 14 }, (_, i) => ({
      sessionId: `ses_child0000000${i}`,
      agent: "general",
      depth: 1,
      lastToolCall: null,
      state: "running",
    }));
    expect(buildResumeContext({ ...input, interruptedWork: many })).toContain("- …and 4 more");
  });
});

describe.each(["UTC", "Pacific/Auckland"])("buildResumeContext with process time zone %s", (zone) => {
  useProcessTimeZone(zone);

  it("the ISO timestamp never moves, and an explicit timeZone wins over the process zone", () => {
    expect(buildResumeContext(input)).toContain("Last activity: 2026-02-04T10:30:00Z (Wed 4 Feb 2026, 11:30 GMT+1).");
  });

  it("without a timeZone the readable time follows the process zone", () => {
    const text = buildResumeContext({ ...input, timeZone: undefined });
    expect(text).toContain("2026-02-04T10:30:00Z (");
    expect(text).toContain(zone === "UTC" ? "Wed 4 Feb 2026, 10:30 UTC" : "Wed 4 Feb 2026, 23:30 GMT+13");
  });
});
