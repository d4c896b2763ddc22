import { describe, expect, it } from "vitest";
import { resumeContextDue, transition } from "../../../governance/session/session-machine.ts";
import { CHILD_ID, HOUR, MINUTE, T0, makeChildRecord, makeRecord } from "../fixtures/records.ts";
import { audits, childCtx, config, ctx } from "./machine-fixture.ts";

/**
 * Issue 21 item 1: the 1 h / 48 h rules of S5 apply on the next prompt, in a process that never restarted. The
 * process-start path (`first_seen`) is covered by session-machine.test.ts; here the session is hosted all along.
 */
describe("resume on the next prompt (a process that stays up)", () => {
  const prompt = (after: number) => ({ type: "prompt", at: T0 + after }) as const;

  it("a prompt within the hour continues: no resume, activity moves on", () => {
    const r = transition(makeRecord(), prompt(59 * MINUTE), ctx);
    expect(r.next).toMatchObject({ state: "between_turn", resume: null, lastActivityAt: T0 + 59 * MINUTE });
    expect(r.effects).toEqual([]);
  });

  it("a prompt after exactly 1 h (and after 2 h) resumes the idle session, with its resume context due", () => {
    for (const gap of [1 * HOUR, 2 * HOUR]) {
      const r = transition(makeRecord(), prompt(gap), ctx);
      expect(r.next).toMatchObject({ state: "resumed", resume: { idleMs: gap, previousState: "between_turn", interrupted: false } });
      expect(r.next!.counters.resumes).toBe(1);
      expect(resumeContextDue(r.next!)).toBe(true);
      expect(audits(r.effects)).toContain("session_resumed");
    }
  });

  it("a prompt after Escape resumes at once, whatever the gap, and says it was interrupted", () => {
    const interrupted = makeRecord({ state: "interrupted", stateBeforeInterrupt: "beginning", interruptedAt: T0 });
    const r = transition(interrupted, prompt(5_000), ctx);
    expect(r.next).toMatchObject({ state: "resumed", resume: { interrupted: true, previousState: "beginning" } });
  });

  it("a prompt at 48 h starts the session fresh (the old record archived), in the same process", () => {
    const old = makeRecord({ todo: { total: 3, open: 1, atToolCalls: 0 }, counters: { toolCalls: 9 } });
    const r = transition(old, prompt(48 * HOUR), ctx);
    expect(r.next).toMatchObject({ state: "beginning", resume: null, todo: null, createdAt: T0 + 48 * HOUR });
    expect(r.next!.counters.toolCalls).toBe(0);
    expect(audits(r.effects)).toContain("session_expired");
  });

  it("a subagent (level 2+) is resumed in its record but never gets a resume context (S5-R08)", () => {
    const child = makeChildRecord();
    const r = transition(child, { type: "prompt", at: T0 + 3 * HOUR }, childCtx);
    expect(r.next).toMatchObject({ sessionId: CHILD_ID, state: "resumed" });
    expect(resumeContextDue(r.next!)).toBe(false);
    expect(r.effects).toContainEqual({ type: "resume_context", allowed: false });
  });

  it("the first model step after the prompt does not resume twice, and the turn's end retires the context", () => {
    const resumed = transition(makeRecord(), prompt(2 * HOUR), ctx).next!;
    const again = transition(resumed, prompt(2 * HOUR + 1), ctx).next!;
    expect(again.counters.resumes).toBe(1);
    const stepped = transition(again, { type: "model_step", at: T0 + 2 * HOUR + 2 }, ctx).next!;
    expect(stepped).toMatchObject({ state: "between_turn", resume: { idleMs: 2 * HOUR } });
    const ended = transition(stepped, { type: "idle", at: T0 + 2 * HOUR + 3 }, ctx).next!;
    expect(ended.resume).toBeNull();
    expect(config.minIdleMs).toBe(HOUR);
  });
});
