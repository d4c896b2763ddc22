import { describe, expect, it } from "vitest";
import { checkStoredRecord, reconcileRecord } from "../../../governance/session/record-integrity.ts";
import type { SessionRecord } from "../../../governance/session/session-record.ts";
import { makeRecord } from "../helpers.ts";

const host = { host: "h", pid: 42, start: "1" };
const ours: SessionRecord = {
  ...makeRecord("ses_childaaaaaaaaaaaaaaaaaa", 1, { parentId: "ses_parentaaaaaaaaaaaaaaaaa", rootId: "ses_parentaaaaaaaaaaaaaaaaa", depth: 1, level: 2 }),
  hostedBy: host,
  control: "stopping",
  counters: { toolCalls: 9, modelSteps: 10, violations: 1, compactions: 0, resumes: 0 },
};
const withStop: SessionRecord = {
  ...ours,
  stop: {
    requestId: "stop-1",
    requestedAt: 1,
    reason: "user",
    requestedBy: "cli:u",
    nextLevel: 2,
    delivered: [1],
    deadlineAt: 5,
    quietMs: null,
    capAt: null,
    abortAttempts: 0,
    parentNotified: false,
  },
};

describe("a record rewritten by someone else is reconciled with what the host wrote (issue 27)", () => {
  it("the same record passes unchanged", () => {
    expect(reconcileRecord(structuredClone(withStop), withStop)).toMatchObject({ tampered: [], moved: false });
  });

  it("a reset counter and a lifted stop are restored and named", () => {
    const stored = { ...structuredClone(withStop), control: "active" as const, stop: null, counters: { ...withStop.counters, toolCalls: 0 } };
    const r = reconcileRecord(stored, withStop);
    expect(r.tampered).toEqual(expect.arrayContaining(["control", "stop", "counters.toolCalls"]));
    expect(r.record.control).toBe("stopping");
    expect(r.record.stop).toEqual(withStop.stop);
    expect(r.record.counters.toolCalls).toBe(9);
  });

  it("use only goes up: a higher stored counter stays; copied raises and a cleared escalation are ours again", () => {
    const raise = { id: "raise-1", at: 1, scope: "session" as const, add: { toolCalls: 2 }, by: "cli:u", sig: "a".repeat(64) };
    const mine = { ...withStop, budget: { ...withStop.budget, raises: [raise] } };
    const stored = structuredClone(mine);
    stored.counters.modelSteps = 99;
    stored.budget.raises = Array(50).fill(raise);
    stored.parentId = null;
    const r = reconcileRecord(stored, mine);
    expect(r.record.counters.modelSteps).toBe(99);
    expect(r.record.budget.raises).toHaveLength(1);
    expect(r.record.parentId).toBe(mine.parentId);
    expect(r.tampered).toEqual(expect.arrayContaining(["budget.raises", "parentId"]));
  });

  it("a record another live process took over (its host named) while this one is not running it is left as stored", () => {
    const idle = { ...withStop, control: "active" as const, stop: null };
    const stored = { ...structuredClone(idle), hostedBy: { host: "h", pid: 43, start: "2" } };
    expect(reconcileRecord(stored, idle)).toMatchObject({ moved: true, tampered: [], record: stored });
  });
});

describe("the hosting process is the authority for the sessions it runs (issue 41)", () => {
  const idle = { ...withStop, control: "active" as const, stop: null };
  const pid1 = { host: "h", pid: 1, start: "2" };

  it("hostedBy moved to another live process during a stop under way here is restored, with the stop", () => {
    const stored = { ...structuredClone(withStop), hostedBy: pid1, control: "active" as const, stop: null };
    const r = reconcileRecord(stored, withStop, { activeHere: false, hostGone: () => false });
    expect(r).toMatchObject({ moved: false, reason: "host_rewritten" });
    expect(r.tampered).toEqual(expect.arrayContaining(["hostedBy", "control", "stop"]));
    expect(r.record.hostedBy).toEqual(host);
    expect(r.record.stop).toEqual(withStop.stop);
  });

  it("hostedBy moved while a turn runs here is restored; moved to a dead process, restored even when idle here", () => {
    const stored = { ...structuredClone(idle), hostedBy: pid1 };
    expect(reconcileRecord(stored, idle, { activeHere: true, hostGone: () => false })).toMatchObject({ moved: false, record: { hostedBy: host } });
    expect(reconcileRecord(stored, idle, { activeHere: false, hostGone: (h) => h.pid === 1 })).toMatchObject({ moved: false, record: { hostedBy: host } });
    expect(reconcileRecord(stored, idle, { activeHere: false, hostGone: () => false })).toMatchObject({ moved: true });
  });

  it("a record missing or undecodable is restored whole from this process's copy; without a copy nothing is decided", () => {
    expect(checkStoredRecord(undefined, withStop)).toEqual({ record: withStop, tampered: ["record"], moved: false, reason: "unreadable" });
    expect(checkStoredRecord(undefined, undefined)).toBeUndefined();
    const stored = structuredClone(withStop);
    expect(checkStoredRecord(stored, undefined)).toEqual({ record: stored, tampered: [], moved: false });
  });

  it("a session turned back (stopped → active, counters lowered, stop level lowered) comes back as this process wrote it", () => {
    const stopped = { ...withStop, control: "stopped" as const };
    const stored = {
      ...structuredClone(stopped),
      control: "active" as const,
      counters: { ...stopped.counters, toolCalls: 1 },
      stop: { ...withStop.stop!, nextLevel: 1 as const, delivered: [] },
    };
    const r = checkStoredRecord(stored, stopped);
    expect(r?.reason).toBe("rewritten");
    expect(r?.record).toMatchObject({ control: "stopped", stop: withStop.stop, counters: { toolCalls: 9 } });
  });

  it("a host removed from the record is restored", () => {
    const stored = { ...structuredClone(withStop), hostedBy: null };
    expect(reconcileRecord(stored, withStop).tampered).toContain("hostedBy");
  });
});
