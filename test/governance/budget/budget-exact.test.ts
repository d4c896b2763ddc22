import { describe, expect, it } from "vitest";
import { checkBudget, standDown, takeStandDownNotice } from "../../../governance/budget/budget-check.ts";
import { sessionUsage, takeMessageUse, takeReportedUse } from "../../../governance/budget/budget-usage.ts";
import { budgetSummary, budgetView } from "../../../governance/budget/budget-view.ts";
import { formatAmount } from "../../../governance/config/budget-units.ts";
import { GovernanceConfig } from "../../../governance/config/config-schema.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { buildStandDownNotice, formatUse } from "../../../governance/budget/budget-notices.ts";
import { makeRecord } from "../fixtures/records.ts";

/** Issue 28 §1: budgets exact — totals, a cost budget that cannot work, precision, the stand-down notice. */
const CHILD = "ses_child0000000000000000000001";
const child = () => makeRecord({ sessionId: CHILD, parentId: "ses_root00000000000000000000001", depth: 1, agent: "costcap" } as never);
const tokens = (input: number, output = 0) => ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 });

describe("totals equal OpenCode's own after every way a session ends", () => {
  it("an aborted step's cost and tokens count although no final session.updated came (message.updated carried them)", () => {
    let r = child();
    // Eight steps: each message reported, then the session's totals.
    for (let i = 1; i <= 8; i++) {
      r = takeMessageUse(r, { id: `msg_${i}`, tokens: tokens(11_000), cost: 0.2 }).next;
      r = takeReportedUse(r, { tokens: tokens(11_000 * i), cost: 0.2 * i }).next;
    }
    expect(r.budget.cost).toBeCloseTo(1.6, 9);
    // The ninth step is aborted: its message is updated with its cost, no session.updated follows.
    const taken = takeMessageUse(r, { id: "msg_9", tokens: tokens(11_000), cost: 0.2 });
    expect(taken.next.budget.cost).toBeCloseTo(1.8, 9);
    expect(taken.next.budget.tokens.input).toBe(99_000);
    expect(taken.delta).toMatchObject({ cost: expect.closeTo(0.2, 9), tokens: tokens(11_000) });
  });
  it("a message's repeated or growing update counts once, at its largest; the session's totals never double it", () => {
    let r = child();
    r = takeMessageUse(r, { id: "msg_1", tokens: tokens(100), cost: 0.1 }).next;
    r = takeMessageUse(r, { id: "msg_1", tokens: tokens(100), cost: 0.1 }).next;
    r = takeReportedUse(r, { tokens: tokens(100), cost: 0.1 }).next;
    r = takeMessageUse(r, { id: "msg_1", tokens: tokens(150, 10), cost: 0.15 }).next;
    expect(r.budget.cost).toBeCloseTo(0.15, 9);
    expect(r.budget.tokens).toEqual(tokens(150, 10));
  });
});

describe("a cost budget that cannot work is said once", () => {
  it("tokens used, cost 0: one audit line and one toast per scope, then nothing", () => {
    const r = takeReportedUse(child(), { tokens: tokens(99_000), cost: 0 }).next;
    expect(r.budget.costReported).toBe(false);
    const first = checkBudget(r, "session", sessionUsage(r, 0), { cost: 0.5 }, 0.8, 0);
    expect(first.effects.map((e) => (e.type === "audit" ? e.event : e.type))).toEqual(["budget_cost_unreported", "toast"]);
    expect(first.next.budget.session.costUnreported).toBe(true);
    expect(checkBudget(first.next, "session", sessionUsage(first.next, 0), { cost: 0.5 }, 0.8, 1).effects).toEqual([]);
  });
  it("with prices nothing is said", () => {
    const r = takeReportedUse(child(), { tokens: tokens(1_000), cost: 0.003 }).next;
    expect(checkBudget(r, "session", sessionUsage(r, 0), { cost: 0.5 }, 0.8, 0).effects).toEqual([]);
  });
});

describe("amounts with the precision they were set with", () => {
  it("a $0.001 limit is $0.001, not $0.00", () => {
    expect(formatUse("cost", 0.0004, 0.001)).toBe("$0.000 of $0.001 cost");
    expect(formatUse("cost", 1.62, 2)).toBe("$1.62 of $2.00 cost");
    expect(formatAmount("cost", 0.001, 0.001)).toBe("$0.001");
    const config = GovernanceConfig.parse({ budgets: { agents: { costcap: { cost: 0.001 } } } });
    expect(budgetSummary(budgetView(child(), config, 0))).toContain("cost $0.000/$0.001");
  });
});

describe("a raise that stands a budget stop down tells the session once", () => {
  it("the mark is set by the stand-down and taken once", () => {
    const stopping = startStop(child(), {
      requestId: "budget-session-toolCalls-1",
      at: 1,
      level: 1,
      reason: "Budget exceeded",
      by: "governance",
      deadlineMs: 5_000,
    }).next;
    const stood = standDown(stopping, "session");
    expect(stood.stoodDown).toBe(true);
    const told = takeStandDownNotice(stood.next);
    expect(told.scope).toBe("session");
    expect(takeStandDownNotice(told.next).scope).toBeNull();
    const text = buildStandDownNotice([{ key: "toolCalls", used: 5, limit: 15, scope: "session" }]);
    expect(text).toContain("you may continue your task");
    expect(text).toContain("- You: 10 left of the tool calls budget (5 of 15 tool calls used).");
  });
});
