import { describe, expect, it } from "vitest";
import { isIdle, isRunningChild, isRunningSession, sessionStatus } from "../../../governance/session/running.ts";
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
