import { describe, expect, it } from "vitest";
import { applyRaise, checkBudget, standDown } from "../../../governance/budget/budget-check.ts";
import { grantRaise, verifiedRaises } from "../../../governance/budget/budget-raise.ts";
import { addTreeUse, markBusy, raisedLimits, sessionUsage, takeReportedUse, treeUsage } from "../../../governance/budget/budget-usage.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { makeRecord } from "../fixtures/records.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CHILD = "ses_child0000000000000000000001";
const child = (toolCalls: number) =>
  makeRecord({ sessionId: CHILD, parentId: "ses_root00000000000000000000001", depth: 1, agent: "explore", counters: { toolCalls } } as never);

describe("checkBudget", () => {
  it("warns once at the threshold, exceeds once at the limit, and changes nothing in between", () => {
    const limits = { toolCalls: 10 };
    const below = child(7);
    expect(checkBudget(below, "session", sessionUsage(below, 0), limits, 0.8, 0).next).toBe(below);
    const at8 = checkBudget(child(8), "session", sessionUsage(child(8), 0), limits, 0.8, 0);
    expect(at8.warnings).toEqual([{ key: "toolCalls", used: 8, limit: 10, scope: "session" }]);
    expect(at8.effects[0]).toMatchObject({ type: "audit", event: "budget_warning" });
    const again = { ...at8.next, counters: { ...at8.next.counters, toolCalls: 9 } };
    expect(checkBudget(again, "session", sessionUsage(again, 0), limits, 0.8, 0).next).toBe(again);
    const at10 = { ...again, counters: { ...again.counters, toolCalls: 10 } };
    const over = checkBudget(at10, "session", sessionUsage(at10, 0), limits, 0.8, 5);
    expect(over.exceeded).toEqual({ key: "toolCalls", used: 10, limit: 10, scope: "session" });
    expect(over.next.budget.session.exceeded).toEqual({ key: "toolCalls", used: 10, limit: 10, at: 5 });
    expect(over.effects.map((e) => (e.type === "audit" ? e.event : e.type))).toEqual(["budget_exceeded", "toast"]);
    const later = checkBudget(over.next, "session", sessionUsage(over.next, 0), limits, 0.8, 6);
    expect(later.exceeded).toBeNull();
    expect(later.next).toBe(over.next);
  });

  it("counts tokens, cost and active time from OpenCode's absolute totals; a repeated or smaller report adds nothing", () => {
    const r = child(0);
    const first = takeReportedUse(r, { tokens: { input: 500, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.0015 });
    expect(first.delta.tokens?.input).toBe(500);
    expect(takeReportedUse(first.next, { tokens: { input: 500, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0.0015 }).next).toBe(first.next);
    expect(takeReportedUse(first.next, { tokens: { input: 100, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 }).next).toBe(first.next);
    const u = sessionUsage(first.next, 0);
    expect(u).toMatchObject({ tokens: 505, inputTokens: 500, cost: 0.0015 });
    const busy = markBusy(first.next, true, 1000);
    expect(sessionUsage(busy, 4000).activeTime).toBe(3000);
    const idle = markBusy(busy, false, 5000);
    expect(sessionUsage(idle, 9000).activeTime).toBe(4000);
  });

  it("says when a provider reports no cost instead of guessing", () => {
    const r = takeReportedUse(child(0), { tokens: { input: 500, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 }).next;
    expect(r.budget.costReported).toBe(false);
  });

  it("keeps a tree's totals on its root only", () => {
    const root = makeRecord();
    const grown = addTreeUse(root, { toolCalls: 1, modelRequests: 2, cost: 0.5 });
    expect(treeUsage(grown, 0)).toMatchObject({ toolCalls: 1, modelRequests: 2, cost: 0.5 });
    expect(addTreeUse(child(0), { toolCalls: 1 })).toEqual(child(0));
  });
});

describe("raises", () => {
  const env = { HOME: mkdtempSync(join(tmpdir(), "budget-key-")), XDG_STATE_HOME: "" } as NodeJS.ProcessEnv;
  env.XDG_STATE_HOME = join(env.HOME as string, "state");

  it("a signed raise stands a budget stop down; a forged or copied one counts for nothing", () => {
    const r0 = child(10);
    const over = checkBudget(r0, "session", sessionUsage(r0, 0), { toolCalls: 10 }, 0.8, 1).next;
    const stopping = startStop(over, {
      requestId: "budget-session-toolCalls-1",
      at: 1,
      level: 1,
      reason: "Budget exceeded",
      by: "governance",
      deadlineMs: 5000,
    }).next;
    const grant = grantRaise(CHILD, { id: "raise-1", at: 2, scope: "session", add: { toolCalls: 10 }, by: "user" }, env);
    expect(grant).toBeDefined();
    const raises = verifiedRaises(CHILD, [grant!], env);
    expect(raises).toHaveLength(1);
    const res = applyRaise(stopping, grant!, sessionUsage(stopping, 3), raisedLimits({ toolCalls: 10 }, raises, "session"), 0.8);
    expect(res.stoodDown).toBe(true);
    expect(res.next).toMatchObject({ control: "active", stop: null });
    expect(res.next.budget.session.exceeded).toBeNull();
    // Forged: a hand-written signature, or a real one copied onto another session.
    const forged = { ...grant!, sig: "0".repeat(64) };
    expect(verifiedRaises(CHILD, [forged], env)).toEqual([]);
    expect(verifiedRaises("ses_other0000000000000000000001", [grant!], env)).toEqual([]);
    const bigger = { ...grant!, add: { toolCalls: 1_000_000 } };
    expect(verifiedRaises(CHILD, [bigger], env)).toEqual([]);
  });

  it("a raise counts once: the same signed raise copied within the record adds nothing (issue 27)", () => {
    const grant = grantRaise(CHILD, { id: "raise-copy", at: 2, scope: "session", add: { toolCalls: 2 }, by: "user" }, env)!;
    const copies = verifiedRaises(CHILD, Array(50).fill(grant), env);
    expect(copies).toHaveLength(1);
    expect(raisedLimits({ toolCalls: 4 }, copies, "session").toolCalls).toBe(6);
  });

  it("a raise too small to bring the budget under its limit keeps the stop; a user's own stop never stands down", () => {
    const r0 = child(30);
    const over = checkBudget(r0, "session", sessionUsage(r0, 0), { toolCalls: 10 }, 0.8, 1).next;
    const grant = grantRaise(CHILD, { id: "raise-2", at: 2, scope: "session", add: { toolCalls: 5 }, by: "user" }, env)!;
    const stopping = startStop(over, { requestId: "budget-session-toolCalls-1", at: 1, level: 1, reason: "x", by: "governance", deadlineMs: 5000 }).next;
    const res = applyRaise(stopping, grant, sessionUsage(stopping, 3), { toolCalls: 15 }, 0.8);
    expect(res.stoodDown).toBe(false);
    expect(res.next.control).toBe("stopping");
    const userStop = startStop(child(1), { requestId: "user-stop", at: 1, level: 1, reason: "x", by: "cli", deadlineMs: 5000 }).next;
    expect(standDown(userStop).stoodDown).toBe(false);
  });
});
