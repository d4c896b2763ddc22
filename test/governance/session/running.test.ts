import { describe, expect, it } from "vitest";
import { isIdle, isRunningChild, isRunningSession, sessionStatus, statusCounts, statusCountsLine } from "../../../governance/session/running.ts";
import { makeRecord, T0 } from "../fixtures/records.ts";

describe("what running means, one word for where a session stands", () => {
  it.each([
    ["active, mid-turn", {}, true, "running"],
    ["stopping", { control: "stopping" }, true, "stopping"],
    ["its turn ended (idle)", { idleAt: T0 }, false, "idle"],
    ["a new turn started after the idle", { idleAt: T0 - 1 }, true, "running"],
    ["interrupted (Escape)", { state: "interrupted" }, false, "interrupted"],
    ["stopped", { control: "stopped" }, false, "stopped"],
    ["task completed", { control: "completed", end: { at: T0, how: "completed", detail: null } }, false, "completed"],
    ["task failed", { control: "completed", end: { at: T0, how: "failed", detail: "ProviderError" } }, false, "failed"],
    ["deleted", { control: "completed", end: { at: T0, how: "deleted", detail: null } }, false, "deleted"],
    ["orphaned (its host died)", { control: "orphaned", end: { at: T0, how: "orphaned", detail: "host process 1 ended" } }, false, "orphaned"],
  ] as const)("%s", (_name, overrides, running, status) => {
    const r = makeRecord(overrides as never);
    expect(isRunningSession(r)).toBe(running);
    expect(sessionStatus(r)).toBe(status);
    expect(isIdle(r)).toBe(status === "idle");
  });

  it("a child link runs until it is closed, whatever closed it", () => {
    const link = { sessionId: "ses_child000000000000000000001", agent: null, createdAt: T0, closedAt: null, outcome: "running" as const };
    expect(isRunningChild(link)).toBe(true);
    for (const outcome of ["completed", "aborted", "failed", "orphaned"] as const) expect(isRunningChild({ ...link, closedAt: T0, outcome })).toBe(false);
  });
});

describe("the headline counts (issue 39: '11 recorded, 8 active' with nothing running)", () => {
  const id = (n: number) => `ses_count${String(n).padStart(20, "0")}`;
  it("idle roots, ended and stopped sessions are not running; a mid-turn record of a dead process is orphaned, not running", () => {
    const records = [
      makeRecord({ sessionId: id(1), idleAt: T0 }),
      makeRecord({ sessionId: id(2), idleAt: T0 }),
      makeRecord({ sessionId: id(3), state: "interrupted" }),
      makeRecord({ sessionId: id(4), control: "stopped" }),
      makeRecord({ sessionId: id(5), control: "completed", end: { at: T0, how: "completed", detail: null } }),
      makeRecord({ sessionId: id(6) }),
    ];
    const dead = statusCounts(records, (r) => r.sessionId === id(6));
    expect(dead).toEqual({ recorded: 6, running: 0, byStatus: { interrupted: 1, idle: 2, orphaned: 1, stopped: 1, completed: 1 } });
    expect(statusCountsLine(dead)).toBe("0 running now; 6 recorded: 1 interrupted, 2 idle, 1 orphaned, 1 stopped, 1 completed");
    const live = statusCounts(records, () => false);
    expect(live.running).toBe(1);
    expect(statusCountsLine(live)).toMatch(/^1 running now; 6 recorded: 1 running, /);
  });
});
