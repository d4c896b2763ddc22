import { describe, expect, it } from "vitest";
import { firstActionCheck, firstActionDue } from "../../../governance/session/first-action.ts";
import { noteStale } from "../../../governance/session/session-checks.ts";
import type { Effect, SessionEvent } from "../../../governance/session/session-machine.ts";
import { MAX_INTERRUPTIONS } from "../../../governance/session/session-record.ts";
import { STALE_AFTER, modelStaleWarnings, staleWarnings } from "../../../governance/session/stale-state.ts";
import { HOUR, MINUTE, T0, makeChildRecord, makeRecord } from "../fixtures/records.ts";
import { AT, audits, created, run } from "./machine-fixture.ts";

const auditOf = (effects: Effect[], event: string) =>
  effects.find((e) => e.type === "audit" && e.event === event) as { data: Record<string, unknown> } | undefined;
const call = (at: number, tool: string, role?: "primary" | "delegating" | "leaf"): SessionEvent => ({
  type: "tool_before",
  at,
  tool,
  callId: `c${at}`,
  summary: "",
  ...(role ? { role } : {}),
});
const step = (at: number, phase?: string): SessionEvent => ({ type: "model_step", at, ...(phase ? { phase } : {}) });

describe("S1-R03: the record stores its phase; a phase change in the config is in the session's history", () => {
  it("a new record keeps the config phase it started under", () => {
    const { record } = run([{ ...created, phase: "planning" }]);
    expect(record.phase).toEqual({ phase: "planning", at: AT });
    expect(record.phaseHistory).toEqual([{ phase: "planning", at: AT }]);
  });

  it("a model step under another phase appends it to the history and audits phase_changed once", () => {
    const { record, effects } = run([
      { ...created, phase: "planning" },
      step(AT + 1, "planning"),
      step(AT + 2, "implementation"),
      step(AT + 3, "implementation"),
    ]);
    expect(record.phase).toEqual({ phase: "implementation", at: AT + 2 });
    expect(record.phaseHistory.map((p) => p.phase)).toEqual(["planning", "implementation"]);
    expect(audits(effects).filter((a) => a === "phase_changed")).toHaveLength(1);
    expect(auditOf(effects, "phase_changed")!.data).toMatchObject({ from: "planning", to: "implementation", since: AT });
  });

  it("a record that never knew its phase (migrated from v1) learns it without a phase_changed line", () => {
    const { record, effects } = run([step(AT, "release")], { start: makeRecord() });
    expect(record.phase).toEqual({ phase: "release", at: AT });
    expect(audits(effects)).not.toContain("phase_changed");
  });
});

describe("S1 First Action Required, checked on the first tool call", () => {
  it.each([
    ["primary", "todoread", true],
    ["primary", "task", true],
    ["primary", "governance", true],
    ["primary", "edit", false],
    ["primary", "bash", false],
    ["primary", "read", false],
    ["leaf", "read", true],
    ["leaf", "bash", true],
    ["leaf", "edit", false],
    ["leaf", "write", false],
    ["delegating", "edit", true],
  ] as const)("%s whose first call is %s: ok=%s", (role, tool, ok) => {
    expect(firstActionCheck(role, tool, AT)).toEqual({ at: AT, tool, role, ok });
  });

  it("a coordinator whose first call is an edit is audited first_action_missed once; later calls are not judged", () => {
    const { record, effects } = run([created, call(AT + 1, "edit", "primary"), call(AT + 2, "edit", "primary"), call(AT + 3, "todoread", "primary")]);
    expect(record.firstAction).toEqual({ at: AT + 1, tool: "edit", role: "primary", ok: false });
    expect(audits(effects).filter((a) => a === "first_action_missed")).toHaveLength(1);
    expect(auditOf(effects, "first_action_missed")!.data).toMatchObject({ agent: "coordinator", role: "primary", tool: "edit" });
  });

  it("a coordinator that reads its todo list first passes, silently", () => {
    const { record, effects } = run([created, call(AT + 1, "todoread", "primary"), call(AT + 2, "edit", "primary")]);
    expect(record.firstAction).toMatchObject({ tool: "todoread", ok: true });
    expect(audits(effects)).not.toContain("first_action_missed");
  });

  it("a first call made without a role (an adapter that does not know it) is not checked, and never is later", () => {
    const { record } = run([created, call(AT + 1, "edit"), call(AT + 2, "edit", "primary")]);
    expect(record.firstAction).toBeNull();
    expect(record.firstTool).toBe("edit");
  });

  it("the reminder is due from the miss until the turn ends", () => {
    const missed = run([created, call(AT + 1, "edit", "primary")]).record;
    expect(firstActionDue(missed)).toMatchObject({ tool: "edit" });
    expect(firstActionDue(run([{ type: "idle", at: AT + 2 }], { start: missed }).record)).toBeUndefined();
    expect(firstActionDue(run([created, call(AT + 1, "todoread", "primary")]).record)).toBeUndefined();
  });
});

describe("S1 stale state warnings", () => {
  const running = (over: Parameters<typeof makeRecord>[0] = {}) => makeRecord({ state: "between_turn", idleAt: null, ...over });

  it(`a todo list with open items unchanged for ${STALE_AFTER.todoToolCalls} tool calls is stale; fewer is not`, () => {
    const r = running({ todo: { total: 5, open: 3, atToolCalls: 10 }, counters: { toolCalls: 10 + STALE_AFTER.todoToolCalls - 1 } });
    expect(staleWarnings(r, T0)).toEqual([]);
    const later = { ...r, counters: { ...r.counters, toolCalls: 10 + STALE_AFTER.todoToolCalls } };
    expect(staleWarnings(later, T0)).toEqual([{ kind: "todo", open: 3, total: 5, toolCalls: STALE_AFTER.todoToolCalls }]);
    // Nothing open: nothing to track.
    expect(staleWarnings({ ...later, todo: { total: 5, open: 0, atToolCalls: 10 } }, T0)).toEqual([]);
  });

  it("raised by the tool call that crosses the line, audited state_stale once, cleared by a todo update", () => {
    const start = running({ todo: { total: 2, open: 2, atToolCalls: 0 }, counters: { toolCalls: STALE_AFTER.todoToolCalls - 1 } });
    const crossed = run([call(T0 + 1, "read"), call(T0 + 2, "read")], { start });
    expect(crossed.record.stale).toEqual(["todo"]);
    expect(audits(crossed.effects).filter((a) => a === "state_stale")).toHaveLength(1);
    expect(auditOf(crossed.effects, "state_stale")!.data).toMatchObject({ kind: "todo", open: 2, toolCalls: STALE_AFTER.todoToolCalls });
    const updated = run([{ type: "todo_updated", at: T0 + 3, total: 2, open: 1 }], { start: crossed.record });
    expect(updated.record.stale).toEqual([]);
    expect(updated.record.todo).toEqual({ total: 2, open: 1, atToolCalls: STALE_AFTER.todoToolCalls + 1 });
  });

  it("a phase unchanged for 24 h of the session's work is stale; the root's model is told, a subagent's is not", () => {
    const phase = { phase: "planning", at: T0 };
    const r = running({ phase, phaseHistory: [phase], lastActivityAt: T0 + 24 * HOUR });
    expect(staleWarnings(r, T0 + 24 * HOUR - 1)).toEqual([]);
    expect(staleWarnings(r, T0 + 24 * HOUR)).toEqual([{ kind: "phase", phase: "planning", forMs: 24 * HOUR }]);
    expect(modelStaleWarnings(r, T0 + 24 * HOUR).map((w) => w.kind)).toEqual(["phase"]);
    const child = makeChildRecord({ phase, phaseHistory: [phase], lastActivityAt: T0 + 24 * HOUR, idleAt: null });
    expect(modelStaleWarnings(child, T0 + 24 * HOUR)).toEqual([]);
  });

  it("a running record with no activity for an hour is stale (for the user, never the model); an idle one is not", () => {
    const r = running({ lastActivityAt: T0 });
    expect(staleWarnings(r, T0 + HOUR - 1)).toEqual([]);
    expect(staleWarnings(r, T0 + HOUR)).toEqual([{ kind: "activity", idleMs: HOUR }]);
    expect(modelStaleWarnings(r, T0 + HOUR)).toEqual([]);
    expect(staleWarnings({ ...r, idleAt: T0 }, T0 + 5 * HOUR)).toEqual([]);
    expect(staleWarnings({ ...r, state: "interrupted" }, T0 + 5 * HOUR)).toEqual([]);
  });

  it("the periodic check raises the activity warning once, writes nothing when nothing changed, and the next event clears it", () => {
    const r = running({ lastActivityAt: T0 });
    expect(noteStale(r, T0 + 10 * MINUTE).next).toBe(r);
    const raised = noteStale(r, T0 + HOUR);
    expect(raised.next!.stale).toEqual(["activity"]);
    expect(audits(raised.effects)).toEqual(["state_stale"]);
    expect(noteStale(raised.next!, T0 + 2 * HOUR).next).toBe(raised.next);
    expect(run([step(T0 + 2 * HOUR)], { start: raised.next! }).record.stale).toEqual([]);
  });
});

describe("S4: a snapshot of the session's counters is kept with each interruption", () => {
  it("the record keeps what it had done when cut off, and the audit line says it", () => {
    const start = makeRecord({
      state: "between_turn",
      counters: { toolCalls: 7, modelSteps: 4, violations: 1 },
      todo: { total: 3, open: 2, atToolCalls: 5 },
      lastToolCall: { tool: "bash", callId: "c7", at: T0, summary: "npm test" },
    });
    const { record, effects } = run([{ type: "aborted", at: T0 + MINUTE }], { start });
    expect(record.interruptions).toEqual([
      {
        at: T0 + MINUTE,
        state: "between_turn",
        counters: { toolCalls: 7, modelSteps: 4, violations: 1, compactions: 0, resumes: 0 },
        lastToolCall: { tool: "bash", callId: "c7", at: T0, summary: "npm test" },
        todo: { total: 3, open: 2 },
      },
    ]);
    expect(auditOf(effects, "session_aborted")!.data.counters).toEqual(record.counters);
  });

  it(`keeps the last ${MAX_INTERRUPTIONS}, newest last`, () => {
    let r = makeRecord();
    for (let i = 0; i < MAX_INTERRUPTIONS + 3; i++)
      r = run([step(T0 + i * 10 * HOUR + 1), { type: "aborted", at: T0 + i * 10 * HOUR + 2 }], { start: r }).record;
    expect(r.interruptions).toHaveLength(MAX_INTERRUPTIONS);
    expect(r.interruptions.at(-1)!.at).toBe(T0 + (MAX_INTERRUPTIONS + 2) * 10 * HOUR + 2);
  });
});
