import { describe, expect, it } from "vitest";
import { type SessionEvent, type SessionEventType, type StateKey, resumeContextDue, transition } from "../../../governance/session/session-machine.ts";
import { SessionRecord, type SessionState } from "../../../governance/session/session-record.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { CHILD_ID, GRANDCHILD_ID, HOUR, MINUTE, ROOT_ID, T0, makeChildRecord, makeRecord, rehydrate } from "../fixtures/records.ts";
import { AT, audits, childCtx, config, created, ctx, run, sample } from "./machine-fixture.ts";

/** Written out by hand (not derived from TRANSITIONS): next state, or "illegal". Events come 1 min after the last activity. */
const expected: Record<StateKey, Record<SessionEventType, SessionState | "illegal">> = {
  absent: {
    created: "beginning",
    first_seen: "beginning",
    prompt: "illegal",
    model_step: "illegal",
    tool_before: "illegal",
    idle: "illegal",
    aborted: "illegal",
    errored: "illegal",
    compacted: "illegal",
    todo_updated: "illegal",
    agent_learned: "illegal",
    action_remembered: "illegal",
  },
  beginning: {
    created: "illegal",
    first_seen: "beginning",
    prompt: "beginning",
    model_step: "beginning",
    tool_before: "beginning",
    idle: "between_turn",
    aborted: "interrupted",
    errored: "beginning",
    compacted: "compacted",
    todo_updated: "beginning",
    agent_learned: "beginning",
    action_remembered: "beginning",
  },
  between_turn: {
    created: "illegal",
    first_seen: "between_turn",
    prompt: "between_turn",
    model_step: "between_turn",
    tool_before: "between_turn",
    idle: "between_turn",
    aborted: "interrupted",
    errored: "between_turn",
    compacted: "compacted",
    todo_updated: "between_turn",
    agent_learned: "between_turn",
    action_remembered: "between_turn",
  },
  compacted: {
    created: "illegal",
    first_seen: "compacted",
    prompt: "compacted",
    model_step: "between_turn",
    tool_before: "between_turn",
    idle: "compacted",
    aborted: "interrupted",
    errored: "compacted",
    compacted: "compacted",
    todo_updated: "compacted",
    agent_learned: "compacted",
    action_remembered: "compacted",
  },
  resumed: {
    created: "illegal",
    first_seen: "resumed",
    prompt: "resumed",
    model_step: "between_turn",
    tool_before: "between_turn",
    idle: "resumed",
    aborted: "interrupted",
    errored: "resumed",
    compacted: "compacted",
    todo_updated: "resumed",
    agent_learned: "resumed",
    action_remembered: "resumed",
  },
  interrupted: {
    created: "illegal",
    first_seen: "resumed",
    prompt: "resumed",
    model_step: "between_turn",
    tool_before: "interrupted",
    idle: "interrupted",
    aborted: "interrupted",
    errored: "interrupted",
    compacted: "compacted",
    todo_updated: "interrupted",
    agent_learned: "interrupted",
    action_remembered: "interrupted",
  },
};

function recordIn(state: StateKey): SessionRecord | undefined {
  if (state === "absent") return undefined;
  const resume = { at: T0, idleMs: 2 * HOUR, previousActivityAt: T0 - 2 * HOUR, previousState: "between_turn" as const, interrupted: false };
  return makeRecord({
    state,
    ...(state === "resumed" ? { resume } : {}),
    ...(state === "compacted" ? { compactedPending: true, compactionHistory: [{ at: T0, trigger: "auto" }] } : {}),
    ...(state === "interrupted" ? { interruptedAt: T0, stateBeforeInterrupt: "between_turn" } : {}),
  });
}

describe("transition table: every state × event", () => {
  for (const [state, row] of Object.entries(expected) as Array<[StateKey, Record<SessionEventType, SessionState | "illegal">]>) {
    for (const [type, want] of Object.entries(row) as Array<[SessionEventType, SessionState | "illegal"]>) {
      it(`${state} + ${type} → ${want}`, () => {
        const before = recordIn(state);
        const result = transition(before, sample[type], ctx);
        if (want === "illegal") {
          expect(result.illegal?.reason).toEqual(expect.any(String));
          expect(result.next).toBe(before);
          expect(result.effects).toEqual([]);
          return;
        }
        expect(result.illegal).toBeUndefined();
        expect(result.next?.state).toBe(want);
        expect(() => SessionRecord.parse(result.next)).not.toThrow();
        expect(result.next?.control).toBe("active");
      });
    }
  }
});

describe("S1: new records", () => {
  it("a root session: level 1, depth 0, its own root, counters zeroed, beginning/active", () => {
    const { next, effects } = transition(undefined, sample.created, ctx);
    expect(next).toMatchObject({ state: "beginning", control: "active", level: 1, depth: 0, rootId: ROOT_ID, parentId: null });
    expect(next?.counters).toEqual({ toolCalls: 0, modelSteps: 0, violations: 0, compactions: 0, resumes: 0 });
    expect(next).toMatchObject({ createdAt: AT, lastActivityAt: AT, agent: "coordinator" });
    expect(audits(effects)).toEqual(["session_created"]);
  });

  it.each([
    [0, 1, 2],
    [1, 2, 3],
    [2, 3, 3],
    [5, 6, 3],
  ])("a child of a depth-%i parent has depth %i and level %i (level capped at 3)", (parentDepth, depth, level) => {
    const ev: SessionEvent = { ...created, parentId: ROOT_ID, parentRecord: { depth: parentDepth, rootId: ROOT_ID } };
    const { next } = transition(undefined, ev, { config, sessionId: GRANDCHILD_ID });
    expect(next).toMatchObject({ depth, level, rootId: ROOT_ID, parentId: ROOT_ID });
  });

  it("a child whose parent record is unknown is assumed one below a root, and says so", () => {
    const { next, effects } = transition(undefined, { ...created, parentId: ROOT_ID }, childCtx);
    expect(next).toMatchObject({ depth: 1, level: 2, rootId: ROOT_ID });
    expect(effects[0]).toMatchObject({ data: { parentKnown: false } });
  });

  it("a late session.created links a record first built by first_seen to its parent (S5-R08 needs the level)", () => {
    const first = transition(undefined, { type: "first_seen", at: T0 }, childCtx).next;
    expect(first?.level).toBe(1);
    const ev: SessionEvent = { type: "created", at: AT, parentId: ROOT_ID, agent: "executor", parentRecord: { depth: 0, rootId: ROOT_ID } };
    const linked = transition(first, ev, childCtx);
    expect(linked.next).toMatchObject({ parentId: ROOT_ID, level: 2, depth: 1, agent: "executor", state: "beginning" });
    expect(transition(linked.next, ev, childCtx).illegal?.reason).toBe("duplicate_created");
    const other = transition(linked.next, { ...ev, parentId: GRANDCHILD_ID }, childCtx);
    expect(other.illegal?.reason).toMatch(/^parent_conflict/);
  });

  it("bad input is a value, not a throw", () => {
    expect(transition(undefined, sample.created, { config, sessionId: "../etc" }).illegal?.reason).toBe("invalid_session_id");
    expect(transition(makeRecord(), sample.idle, childCtx).illegal?.reason).toBe("session_mismatch");
    const bad = { type: "idle", at: "soon" } as unknown as SessionEvent;
    expect(transition(makeRecord(), bad, ctx).illegal?.reason).toMatch(/^invalid_event/);
  });
});

describe("S5: first_seen with a record on disk, at the 1 h / 48 h boundaries", () => {
  const seen = (idle: number, start = makeRecord()) => transition(start, { type: "first_seen", at: start.lastActivityAt + idle }, ctx);

  it("1 h − 1 ms: continue, state kept, no resume context", () => {
    const { next, effects } = seen(HOUR - 1);
    expect(next).toMatchObject({ state: "between_turn", resume: null, lastActivityAt: T0 + HOUR - 1 });
    expect(effects).toEqual([]);
  });

  it("exactly 1 h: resumed, resume filled, resumes++, audit + resume_context allowed", () => {
    const { next, effects } = seen(HOUR);
    expect(next?.state).toBe("resumed");
    expect(next?.resume).toEqual({ at: T0 + HOUR, idleMs: HOUR, previousActivityAt: T0, previousState: "between_turn", interrupted: false });
    expect(next?.counters.resumes).toBe(1);
    expect(effects).toContainEqual({ type: "resume_context", allowed: true });
    expect(audits(effects)).toEqual(["session_resumed"]);
    expect(resumeContextDue(next!)).toBe(true);
  });

  it("48 h − 1 ms: still resumed", () => {
    expect(seen(48 * HOUR - 1).next?.state).toBe("resumed");
  });

  it("exactly 48 h: expired → fresh S1 record, same id and hierarchy, old one archived", () => {
    const old = makeChildRecord({ counters: { toolCalls: 40 }, compactedPending: true, state: "interrupted" });
    const { next, effects } = transition(old, { type: "first_seen", at: T0 + 48 * HOUR }, childCtx);
    expect(next).toMatchObject({ sessionId: CHILD_ID, parentId: ROOT_ID, level: 2, depth: 1, state: "beginning", control: "active" });
    expect(next).toMatchObject({ createdAt: T0 + 48 * HOUR, compactedPending: false, resume: null });
    expect(next?.counters.toolCalls).toBe(0);
    expect(audits(effects)).toEqual(["session_expired"]);
    expect(effects).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ lastActivityAt: old.lastActivityAt, previousState: "interrupted" }) }),
    );
  });

  it("an interrupted record resumes whatever the gap under 48 h, saying where it stood", () => {
    const start = makeRecord({ state: "interrupted", interruptedAt: T0, stateBeforeInterrupt: "compacted" });
    const { next } = seen(MINUTE, start);
    expect(next?.resume).toMatchObject({ interrupted: true, previousState: "compacted", idleMs: MINUTE });
    expect(seen(48 * HOUR, start).next?.state).toBe("beginning");
  });
});

describe("S5-R08: never a primary's resume context in a level 2+ session", () => {
  it.each([2, 3])("level %i resumes (state resumed) but the resume context is not allowed", (level) => {
    const child = makeChildRecord({ level, depth: level - 1 });
    const { next, effects } = transition(child, { type: "first_seen", at: T0 + 2 * HOUR }, childCtx);
    expect(next?.state).toBe("resumed");
    expect(effects).toContainEqual({ type: "resume_context", allowed: false });
    expect(resumeContextDue(next!)).toBe(false);
  });
});

describe("aborted (S4)", () => {
  it("an abort that is part of an ancestor's cascade interrupts without cascading again", () => {
    const r = transition(makeRecord({ state: "between_turn" }), { type: "aborted", at: AT, cascade: true }, ctx);
    expect(r.next?.state).toBe("interrupted");
    expect(r.effects.map((e) => e.type)).toEqual(["audit"]);
    expect(r.effects[0]).toMatchObject({ event: "session_aborted", data: { cascade: true } });
  });

  it("the host stopping a stalled turn (OpenCode 2 `inactivity`): interrupted, cause host, no cascade", () => {
    const r = transition(makeRecord({ state: "beginning" }), { type: "aborted", at: AT, cause: "host" }, ctx);
    expect(r.next?.state).toBe("interrupted");
    expect(r.effects.map((e) => e.type)).toEqual(["audit"]);
    expect(r.effects[0]).toMatchObject({ event: "session_aborted", data: { cause: "host" } });
  });

  it("says who aborted: governance's hard stop (an abort attempt recorded) or the user (Escape, also during a pending stop)", () => {
    const running = makeChildRecord({ state: "between_turn" });
    const pending = startStop(running, { requestId: "req_1", at: T0, level: 1, reason: "enough", by: "cli", deadlineMs: 5_000 }).next;
    const hard = { ...pending, stop: { ...pending.stop!, abortAttempts: 1 } };
    const cause = (r: SessionRecord) => transition(r, { type: "aborted", at: AT }, childCtx).effects.find((e) => e.type === "audit")?.data.cause;
    expect(cause(running)).toBe("user");
    expect(cause(pending)).toBe("user");
    expect(cause(hard)).toBe("stop");
  });

  it("interrupts once: OpenCode's repeated aborts and idles add no second effect set", () => {
    const start = makeRecord({ state: "compacted", compactedPending: true, lastToolCall: { tool: "bash", callId: "c9", at: T0, summary: "npm test" } });
    const first = transition(start, { type: "aborted", at: AT }, ctx);
    expect(first.next).toMatchObject({ state: "interrupted", interruptedAt: AT, stateBeforeInterrupt: "compacted" });
    expect(first.effects.filter((e) => e.type === "interrupt_descendants")).toHaveLength(1);
    expect(audits(first.effects)).toEqual(["session_aborted"]);
    const again = transition(first.next, { type: "aborted", at: AT + 25 }, ctx);
    expect(again.next).toBe(first.next);
    expect(again.effects).toEqual([]);
    const idled = run(
      [
        { type: "idle", at: AT + 30 },
        { type: "idle", at: AT + 31 },
      ],
      { start: first.next },
    );
    expect(idled.record).toMatchObject({ state: "interrupted", compactedPending: true, interruptedAt: AT, idleAt: AT + 31 });
  });

  it("a model step after the interruption is the session going on: resumed, then into the turn", () => {
    const start = makeRecord({ state: "interrupted", interruptedAt: T0, stateBeforeInterrupt: "between_turn" });
    const { next, effects } = transition(start, sample.model_step, ctx);
    expect(next).toMatchObject({ state: "between_turn", counters: { resumes: 1, modelSteps: 1 } });
    expect(next?.resume).toMatchObject({ interrupted: true });
    expect(effects).toContainEqual({ type: "resume_context", allowed: true });
  });

  it("never changes control; a stopped session stays stopped, even across an expired resume", () => {
    const stopped = makeChildRecord({ control: "stopped", stoppedAt: T0 });
    const { record } = run([{ type: "aborted", at: AT }, { type: "first_seen", at: AT + 49 * HOUR }, sample.idle], {
      start: stopped,
      c: childCtx,
    });
    expect(record).toMatchObject({ control: "stopped", stoppedAt: T0, state: "between_turn" });
  });
});

describe("bookkeeping", () => {
  it("tool_before records the last call, the first tool, the count; summaries are capped", () => {
    const { record } = run(
      [
        { type: "tool_before", at: T0 + 1, tool: "todoread", callId: "a", summary: "" },
        { type: "tool_before", at: T0 + 2, tool: "bash", callId: "b", summary: "x".repeat(500) },
        { type: "todo_updated", at: T0 + 4, total: 3, open: 2 },
        { type: "model_step", at: T0 + 5 },
      ],
      { start: makeRecord({ state: "beginning" }) },
    );
    expect(record).toMatchObject({ state: "beginning", firstTool: "todoread", counters: { toolCalls: 2, modelSteps: 1 } });
    expect(record.lastToolCall).toMatchObject({ tool: "bash", callId: "b", at: T0 + 2 });
    expect(record.lastToolCall?.summary).toHaveLength(200);
    expect(record).toMatchObject({ todo: { total: 3, open: 2 }, lastActivityAt: T0 + 5 });
  });

  it("errors are logged, nothing else", () => {
    const start = makeRecord();
    const { next, effects } = transition(start, sample.errored, ctx);
    expect(next).toMatchObject({ state: start.state, lastActivityAt: start.lastActivityAt });
    expect(effects).toEqual([{ type: "audit", event: "session_error", data: { state: "between_turn", message: "provider overloaded" } }]);
  });
});

describe("rehydration: a record read back from disk continues exactly like the one in memory", () => {
  const story: SessionEvent[] = [
    { type: "created", at: T0, parentId: null, agent: "coordinator" },
    { type: "model_step", at: T0 + 1 },
    { type: "tool_before", at: T0 + 2, tool: "task", callId: "t1", summary: "executor: build" },
    { type: "compacted", at: T0 + 4, trigger: "auto" },
    { type: "model_step", at: T0 + 5 },
    { type: "aborted", at: T0 + 6 },
    { type: "idle", at: T0 + 7 },
    { type: "first_seen", at: T0 + 3 * HOUR },
    { type: "idle", at: T0 + 3 * HOUR + 1 },
    { type: "model_step", at: T0 + 4 * HOUR },
    { type: "todo_updated", at: T0 + 4 * HOUR + 1, total: 2, open: 0 },
    { type: "idle", at: T0 + 4 * HOUR + 2 },
  ];

  it("same records and the same effects with a JSON round trip before every event", () => {
    const memory = run(story);
    const disk = run(story, { roundTrip: true });
    expect(rehydrate(disk.record)).toEqual(rehydrate(memory.record));
    expect(disk.effects).toEqual(memory.effects);
    expect(memory.record).toMatchObject({ state: "between_turn", resume: null, compactedPending: false, counters: { resumes: 1 } });
  });
});
