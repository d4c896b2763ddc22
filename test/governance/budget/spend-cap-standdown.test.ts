import { describe, expect, it } from "vitest";
import { capStandDowns, capStandDownStep, capStop, checkCaps } from "../../../governance/budget/spend-caps.ts";
import type { SessionRecord } from "../../../governance/session/session-record.ts";
import { CHILD_ID, makeRecord, ROOT_ID } from "../fixtures/records.ts";

/**
 * A raise that brings a spent cap back under withdraws the stops that cap started (issue 44), as a tree raise stands
 * its tree's stops down: the pure part the spend guard runs.
 */

const DAY = "2026-11-28";
const spentLine = { cap: "project.daily" as const, key: "cost" as const, used: 20.4, limit: 20 };
const input = (used: number, limit: number) => ({ cap: "project.daily" as const, window: DAY, use: { ...zero, cost: used }, limits: { cost: limit } });
const zero = { modelRequests: 0, tokens: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0 };

function stoppedBy(sessionId: string, requestId: string, control: "stopping" | "stopped" = "stopping"): SessionRecord {
  const r = makeRecord({ sessionId, parentId: ROOT_ID, rootId: ROOT_ID, depth: 1, level: 2 });
  const stop = { requestId, requestedAt: 1, reason: "cap", requestedBy: "governance", nextLevel: 2 as const, delivered: [1 as const], deadlineAt: 2 };
  return { ...r, control, stop: { ...r.stop, ...stop, quietMs: null } } as SessionRecord;
}

describe("a cap back under stands its stops down", () => {
  const spent = checkCaps({}, [input(20.4, 20)], 0.8);

  it("checkCaps names a cap that a raise brought back under, once", () => {
    expect(spent.resumed).toEqual([]);
    const raised = checkCaps(spent.marks, [input(20.4, 25)], 0.8);
    expect(raised.resumed).toEqual([{ cap: "project.daily", window: DAY }]);
    expect(checkCaps(raised.marks, [input(20.5, 25)], 0.8).resumed).toEqual([]);
  });

  it("stands down the sessions that cap's stop in that window stopped, not a user's, a tree's or another day's", () => {
    const byCap = stoppedBy(CHILD_ID, capStop(spentLine, DAY).id);
    const terminated = stoppedBy("ses_terminated000000000000001", capStop(spentLine, DAY).id, "stopped");
    const byUser = stoppedBy("ses_user00000000000000000001", "stop-123");
    const byTree = stoppedBy("ses_tree00000000000000000001", "budget-tree-x");
    const yesterday = stoppedBy("ses_old000000000000000000001", capStop(spentLine, "2026-11-27").id);
    const hosted = [makeRecord(), byCap, terminated, byUser, byTree, yesterday];
    const raised = checkCaps(spent.marks, [input(20.4, 25)], 0.8);
    expect(capStandDowns(raised, hosted)).toEqual([CHILD_ID, "ses_terminated000000000000001"]);
    // Still another cap spent: the session would only be stopped again, so it stays stopped.
    expect(capStandDowns({ ...raised, spent: [{ ...spentLine, cap: "user.weekly" }] }, hosted)).toEqual([]);
    expect(capStandDowns(spent, hosted)).toEqual([]);
  });

  it("the step gives control back and leaves the one-time 'you may continue' mark", () => {
    const { next } = capStandDownStep(stoppedBy(CHILD_ID, capStop(spentLine, DAY).id));
    expect(next?.control).toBe("active");
    expect(next?.stop).toBeNull();
    expect(next?.budget.stoodDown).toBe("session");
    expect(capStandDownStep(undefined).next).toBeUndefined();
  });
});
