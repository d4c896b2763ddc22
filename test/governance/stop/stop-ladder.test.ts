import { describe, expect, it } from "vitest";
import type { SessionRecord, StopLevel } from "../../../governance/session/session-record.ts";
import {
  type StopEffect,
  type StopRequest,
  afterAbort,
  confirmStopped,
  gaveUp,
  onCompliance,
  onDeadline,
  onToolBefore,
  BLOCKED_CALL_ABORT_MS,
  onToolResult,
  startStop,
} from "../../../governance/stop/stop-ladder.ts";
import { ROOT_ID, SECOND, T0, makeChildRecord, makeRecord, rehydrate } from "../fixtures/records.ts";

const request = (overrides: Partial<StopRequest> = {}): StopRequest => ({
  requestId: "stop_1",
  at: T0,
  level: 1,
  reason: "wrong approach",
  by: "cli",
  deadlineMs: 5 * SECOND,
  ...overrides,
});
const stopping = (overrides: Partial<StopRequest> = {}, record = makeChildRecord()) => startStop(record, request(overrides)).next;
const notifications = (effects: StopEffect[]) => effects.filter((e) => e.type === "notify_parent");

/** Feeds `n` tool results and returns the delivered levels and every effect. */
function results(record: SessionRecord, n: number) {
  const levels: Array<StopLevel | null> = [];
  const effects: StopEffect[] = [];
  let current = record;
  for (let i = 0; i < n; i++) {
    const r = onToolResult(current, T0 + (i + 1) * 100);
    levels.push(r.action.kind === "deliver" ? r.action.level : null);
    effects.push(...r.effects);
    current = r.next;
  }
  return { record: current, levels, effects };
}

describe("startStop", () => {
  it("puts an active session in `stopping` with the requested level and a deadline", () => {
    const { next, outcome, effects } = startStop(makeChildRecord(), request({ level: 2 }));
    expect(outcome).toBe("started");
    expect(next.control).toBe("stopping");
    expect(next.stop).toMatchObject({ requestId: "stop_1", nextLevel: 2, delivered: [], deadlineAt: T0 + 5 * SECOND, abortAttempts: 0 });
    expect(next.stop).toMatchObject({ reason: "wrong approach", requestedBy: "cli", requestedAt: T0 });
    expect(effects).toEqual([expect.objectContaining({ type: "audit", event: "session_stop_requested" })]);
  });

  it("is idempotent: the same request twice changes nothing", () => {
    const first = stopping();
    const again = startStop(first, request({ at: T0 + 1000 }));
    expect(again.outcome).toBe("already_stopping");
    expect(again.next).toBe(first);
    expect(again.effects).toEqual([]);
  });

  it("a second request at a lower or equal level is absorbed; a higher one raises the pending level, keeps the earlier deadline", () => {
    const first = stopping({ level: 2 });
    expect(startStop(first, request({ requestId: "stop_2", level: 1 })).outcome).toBe("already_stopping");
    const raised = startStop(first, request({ requestId: "stop_3", level: 3, at: T0 + 1000, deadlineMs: 60 * SECOND }));
    expect(raised.outcome).toBe("escalated");
    expect(raised.next.stop).toMatchObject({ requestId: "stop_1", nextLevel: 3, deadlineAt: T0 + 5 * SECOND });
  });

  it("one stopped record however many signals; nothing to stop in a finished session", () => {
    const stopped = makeChildRecord({ control: "stopped", stoppedAt: T0 });
    expect(startStop(stopped, request())).toEqual({ next: stopped, outcome: "already_stopped", effects: [] });
    expect(startStop(makeChildRecord({ control: "completed" }), request()).outcome).toBe("not_running");
  });

  it("caps free text to what the record schema accepts", () => {
    const next = stopping({ reason: "r".repeat(900), by: "b".repeat(300) });
    expect(next.stop?.reason).toHaveLength(500);
    expect(next.stop?.requestedBy).toHaveLength(100);
    expect(() => rehydrate(next)).not.toThrow();
  });
});

describe("the ladder on consecutive tool results", () => {
  it("L1 → L2 → L3, then stopped: SDK abort and one parent notification", () => {
    const { record, levels, effects } = results(stopping(), 5);
    expect(levels).toEqual([1, 2, 3, null, null]);
    expect(record).toMatchObject({ control: "stopped", stoppedAt: T0 + 300 });
    expect(record.stop?.delivered).toEqual([1, 2, 3]);
    expect(effects.filter((e) => e.type === "abort_session")).toHaveLength(1);
    expect(notifications(effects)).toEqual([{ type: "notify_parent", parentId: ROOT_ID, how: "ladder" }]);
    expect(onToolBefore(record, "read")).toEqual({
      block: true,
      reason: "session_stopped",
      requestId: "stop_1",
      effects: [
        { type: "audit", event: "tool_blocked", data: { tool: "read", reason: "session_stopped" } },
        { type: "abort_session", delayMs: BLOCKED_CALL_ABORT_MS },
      ],
    });
  });

  it("a request at L2 starts at L2", () => {
    expect(results(stopping({ level: 2 }), 3).levels).toEqual([2, 3, null]);
  });

  it("a request at L3 terminates on the very next tool result", () => {
    const { record, levels } = results(stopping({ level: 3 }), 2);
    expect(levels).toEqual([3, null]);
    expect(record.control).toBe("stopped");
  });

  it("survives a process restart between tool results (record read back from disk)", () => {
    let record = stopping();
    const levels: StopLevel[] = [];
    for (let i = 0; i < 3; i++) {
      const r = onToolResult(rehydrate(record), T0 + i);
      if (r.action.kind === "deliver") levels.push(r.action.level);
      record = r.next;
    }
    expect(levels).toEqual([1, 2, 3]);
    expect(record.control).toBe("stopped");
  });

  it("a stopping session's tool calls still run (the result carries the directive); an active one is untouched", () => {
    expect(onToolBefore(stopping(), "read")).toEqual({ block: false });
    const active = makeChildRecord();
    expect(onToolResult(active, T0)).toEqual({ next: active, action: { kind: "none" }, effects: [] });
  });

  it("a root session stopped by the ladder has no parent to notify", () => {
    const { effects } = results(stopping({ level: 3 }, makeRecord()), 1);
    expect(notifications(effects)).toEqual([]);
    expect(effects.some((e) => e.type === "abort_session")).toBe(true);
  });
});

describe("the hard stop: deadline → abort → retry → give up", () => {
  const retry = { retryDeadlineMs: 5 * SECOND };

  it("the parent is told once, before the first abort: the record says so, so the final stop does not tell it again", () => {
    const first = onDeadline(stopping(), T0 + 5 * SECOND, retry);
    expect(notifications(first.effects)).toEqual([{ type: "notify_parent", parentId: ROOT_ID, how: "hard-stop" }]);
    expect(first.effects.map((e) => e.type)).toEqual(["audit", "notify_parent", "abort_session"]);
    expect(first.next.stop?.parentNotified).toBe(true);
    const retried = onDeadline(first.next, T0 + 10 * SECOND, retry);
    expect(notifications(retried.effects)).toEqual([]);
    const final = confirmStopped(retried.next, T0 + 11 * SECOND, "hard-stop");
    expect(final.stoppedNow).toBe(true);
    expect(notifications(final.effects)).toEqual([]);
  });

  it("walks abort, retry-abort, give-up (once), with `wait` (arm again) between deadlines", () => {
    let record = stopping();
    const step = (at: number) => {
      const r = onDeadline(record, at, retry);
      record = r.next;
      return r.action;
    };
    expect(step(T0 + 5 * SECOND - 1)).toBe("wait");
    expect(step(T0 + 5 * SECOND)).toBe("abort");
    expect(record.stop).toMatchObject({ abortAttempts: 1, deadlineAt: T0 + 10 * SECOND });
    expect(step(T0 + 10 * SECOND - 1)).toBe("wait");
    expect(step(T0 + 10 * SECOND)).toBe("retry-abort");
    expect(step(T0 + 15 * SECOND)).toBe("give-up");
    expect(gaveUp(record)).toBe(true);
    expect(record.control).toBe("stopping");
    expect(step(T0 + 60 * SECOND)).toBe("none");
  });

  it("the abort and the retry ask for an SDK abort; giving up is reported loudly", () => {
    let record = stopping();
    const all: StopEffect[][] = [];
    for (const at of [T0 + 5 * SECOND, T0 + 10 * SECOND, T0 + 15 * SECOND]) {
      const r = onDeadline(record, at, retry);
      all.push(r.effects);
      record = r.next;
    }
    expect(all.map((e) => e.some((x) => x.type === "abort_session"))).toEqual([true, true, false]);
    expect(all[2]).toEqual([expect.objectContaining({ type: "audit", event: "stop_failed" }), expect.objectContaining({ type: "toast", variant: "error" })]);
  });

  it("an abort confirmed idle stops the session; a later deadline does nothing", () => {
    const aborted = onDeadline(stopping(), T0 + 5 * SECOND, retry).next;
    const confirmed = confirmStopped(aborted, T0 + 5 * SECOND + 40, "hard-stop");
    expect(confirmed.stoppedNow).toBe(true);
    expect(confirmed.next).toMatchObject({ control: "stopped", stoppedAt: T0 + 5 * SECOND + 40 });
    expect(onDeadline(confirmed.next, T0 + 10 * SECOND, retry).action).toBe("none");
  });

  it("nothing happens on a session that is not stopping", () => {
    const active = makeChildRecord();
    expect(onDeadline(active, T0 + 99 * SECOND, retry)).toEqual({ next: active, action: "none", effects: [] });
  });
});

describe('exactly one "you stopped it"', () => {
  type Path = "ladder" | "hard-stop" | "compliance";
  const paths: Path[] = ["ladder", "hard-stop", "compliance"];
  const orders: Path[][] = paths.flatMap((a) => paths.filter((b) => b !== a).flatMap((b) => [[a, b, paths.find((c) => c !== a && c !== b)!]]));

  it.each(orders.map((o) => [o.join(" → "), o] as const))("%s: one stoppedNow, one notification", (_name, order) => {
    let record = stopping({ level: 3 });
    let stoppedNow = 0;
    const effects: StopEffect[] = [];
    order.forEach((path, i) => {
      const at = T0 + (i + 1) * 1000;
      if (path === "ladder") {
        const r = onToolResult(record, at);
        if (r.next.control === "stopped" && record.control !== "stopped") stoppedNow++;
        effects.push(...r.effects);
        record = r.next;
      } else {
        const r = path === "hard-stop" ? confirmStopped(record, at, "hard-stop") : onCompliance(record, at);
        if (r.stoppedNow) stoppedNow++;
        effects.push(...r.effects);
        record = r.next;
      }
    });
    expect(stoppedNow).toBe(1);
    expect(notifications(effects)).toHaveLength(1);
    expect(record.stoppedAt).toBe(T0 + 1000);
  });

  it("compliance: ending the turn while stopping stops it; on an active session it is a no-op", () => {
    const r = onCompliance(stopping(), T0 + 2000);
    expect(r).toMatchObject({ stoppedNow: true, next: { control: "stopped", stoppedAt: T0 + 2000 } });
    expect(r.effects).toContainEqual(expect.objectContaining({ event: "session_stopped", data: expect.objectContaining({ how: "compliance" }) }));
    const active = makeChildRecord();
    expect(onCompliance(active, T0)).toEqual({ next: active, stoppedNow: false, effects: [] });
  });

  it("stop wins: once stopped, new requests, tool results and deadlines change nothing", () => {
    const stopped = onCompliance(stopping(), T0 + 1).next;
    expect(startStop(stopped, request({ requestId: "stop_9", level: 3 })).outcome).toBe("already_stopped");
    expect(onToolResult(stopped, T0 + 2).next).toBe(stopped);
    expect(onDeadline(stopped, T0 + 99 * SECOND, { retryDeadlineMs: 1 }).next).toBe(stopped);
    expect(onToolBefore(stopped, "read").block).toBe(true);
  });
});

describe("afterAbort: the re-abort policy", () => {
  it("idle after the abort: the stop is final (once); a second confirmation changes nothing", () => {
    const r = stopping();
    const first = afterAbort(r, T0 + SECOND, true);
    expect(first).toMatchObject({ stoppedNow: true, action: "none" });
    expect(first.next.control).toBe("stopped");
    expect(afterAbort(first.next, T0 + 2 * SECOND, true)).toMatchObject({ stoppedNow: false, effects: [], action: "none" });
  });
  it("still busy: a stopped session is aborted again at once; a stopping one waits for the retry deadline", () => {
    const stopped = { ...stopping(), control: "stopped" as const };
    expect(afterAbort(stopped, T0, false).action).toBe("abort-again");
    const pending = afterAbort(stopping(), T0, false);
    expect(pending).toMatchObject({ action: "none", stoppedNow: false, effects: [] });
    expect(pending.next.control).toBe("stopping");
  });
});

describe("graceful deadline: counted from the last sign of life once a directive reached the session, capped", () => {
  const graceful = () => stopping({ maxWaitMs: 30 * SECOND });
  it("before any directive reached it, output does not move the deadline: a stuck stream is aborted at request + deadline", () => {
    const r = graceful();
    expect(onDeadline(r, T0 + 5 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 4_900 }).action).toBe("abort");
  });
  it("L1 at 1 s, then streaming its summary: not aborted while it streams; aborted after deadline of silence", () => {
    const l1 = onToolResult(graceful(), T0 + SECOND).next;
    expect(l1.stop?.deadlineAt).toBe(T0 + 6 * SECOND); // the tool call that delivered L1 is a sign of life
    // The timer armed at the request fires at 5 s: not due any more, armed again (no effects, record unchanged).
    expect(onDeadline(l1, T0 + 5 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + SECOND })).toEqual({ next: l1, action: "wait", effects: [] });
    const wait = onDeadline(l1, T0 + 6 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 5_500 });
    expect(wait.action).toBe("wait");
    expect(wait.next.stop?.deadlineAt).toBe(T0 + 10_500);
    expect(wait.effects).toEqual([]);
    expect(onDeadline(wait.next, T0 + 10_499, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 5_500 }).action).toBe("wait");
    expect(onDeadline(wait.next, T0 + 10_500, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 5_500 }).action).toBe("abort");
  });
  it("never past the cap, however lively", () => {
    const l1 = onToolResult(graceful(), T0 + SECOND).next;
    const late = onDeadline(l1, T0 + 29 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 29 * SECOND });
    expect(late.next.stop?.deadlineAt).toBe(T0 + 30 * SECOND);
    expect(onDeadline(late.next, T0 + 30 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 30 * SECOND - 1 }).action).toBe("abort");
  });
  it("once an abort was sent, life does not move the retry deadline", () => {
    const l1 = onToolResult(graceful(), T0 + SECOND).next;
    const aborted = onDeadline(l1, T0 + 6 * SECOND, { retryDeadlineMs: 5 * SECOND }).next;
    expect(onDeadline(aborted, T0 + 11 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 10 * SECOND }).action).toBe("retry-abort");
  });
  it("without maxWait (a caller that does not pass it) the deadline is fixed, as before", () => {
    const l1 = onToolResult(stopping(), T0 + SECOND).next;
    expect(onDeadline(l1, T0 + 5 * SECOND, { retryDeadlineMs: 5 * SECOND, lifeAt: T0 + 4 * SECOND }).action).toBe("abort");
  });
});

describe("what the parent is told really happened", () => {
  it("an abort governance did not send (Escape) while the stop was pending is the user's", () => {
    const done = confirmStopped(stopping(), T0 + SECOND, "hard-stop");
    expect(notifications(done.effects)).toEqual([{ type: "notify_parent", parentId: ROOT_ID, how: "user-abort" }]);
  });
  it("after the hard stop's own abort it stays a hard stop (the parent was told before the abort)", () => {
    const hard = onDeadline(stopping(), T0 + 5 * SECOND, { retryDeadlineMs: 5 * SECOND });
    expect(notifications(hard.effects)).toEqual([{ type: "notify_parent", parentId: ROOT_ID, how: "hard-stop" }]);
    expect(notifications(confirmStopped(hard.next, T0 + 6 * SECOND, "hard-stop").effects)).toEqual([]);
  });
});

describe("an idle that races an abort", () => {
  it("an idle reported after the session was recorded interrupted is the abort, not compliance", () => {
    const interrupted = { ...stopping(), state: "interrupted" as const };
    expect(notifications(onCompliance(interrupted, T0 + SECOND).effects)).toEqual([{ type: "notify_parent", parentId: ROOT_ID, how: "user-abort" }]);
  });
});
