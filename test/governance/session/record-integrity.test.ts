import { describe, expect, it } from "vitest";
import { reconcileRecord } from "../../../governance/session/record-integrity.ts";
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

  it("a record another process took over (its host named) is left as stored", () => {
    const stored = { ...structuredClone(withStop), hostedBy: { host: "h", pid: 43, start: "2" }, control: "active" as const };
    expect(reconcileRecord(stored, withStop)).toMatchObject({ moved: true, tampered: [], record: stored });
  });

  it("a host removed from the record is restored", () => {
    const stored = { ...structuredClone(withStop), hostedBy: null };
    expect(reconcileRecord(stored, withStop).tampered).toContain("hostedBy");
  });
});
