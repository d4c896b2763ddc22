import { describe, expect, it } from "vitest";
import { budgetSummary, budgetView, fullestLine } from "../../../governance/budget/budget-view.ts";
import { formatAmount } from "../../../governance/config/budget-units.ts";
import { BudgetConfig } from "../../../governance/config/budget-config.ts";
import { makeRecord } from "../fixtures/records.ts";

const ROOT = "ses_root00000000000000000000001";
const CHILD = "ses_child0000000000000000000001";
const budgets = (input: unknown) => ({ budgets: BudgetConfig.parse(input) });

describe("what people are shown of a session's budgets", () => {
  it("a subagent under the default runaway guards: every limited budget, compact, with its use", () => {
    const r = makeRecord({ sessionId: CHILD, parentId: ROOT, depth: 1, agent: "explore", counters: { toolCalls: 800, modelSteps: 12 } } as never);
    const view = budgetView(r, budgets({}), 0);
    expect(budgetSummary(view)).toBe("modelRequests 12/500 · toolCalls 800/1000 · activeTime 0s/2h");
    expect(fullestLine(view.session)).toMatchObject({ key: "toolCalls", used: 800, limit: 1000, share: 0.8 });
    expect(view.tree).toBeNull();
  });

  it("a root: nothing of its own unless its agent has limits; the tree's after 'tree:'; unknown cost said, not $0", () => {
    const r = makeRecord({ sessionId: ROOT, agent: "build" } as never);
    const withTree = { ...r, budget: { ...r.budget, tree: { modelRequests: 3, toolCalls: 40, tokens: r.budget.tokens, cost: 0 }, costReported: false } };
    const view = budgetView(withTree, budgets({ tree: { toolCalls: 50, cost: 2 } }), 0);
    expect(budgetSummary(view)).toBe("tree: toolCalls 40/50 · cost $0.00/$2.00 · cost unknown (no prices reported)");
    expect(budgetSummary(budgetView(r, budgets({}), 0))).toBe("");
  });

  it("an exceeded budget leads the line", () => {
    const r = makeRecord({ sessionId: CHILD, parentId: ROOT, depth: 1, agent: "explore", counters: { toolCalls: 10 } } as never);
    const out = {
      ...r,
      budget: {
        ...r.budget,
        session: { warned: ["toolCalls" as const], exceeded: { key: "toolCalls" as const, used: 10, limit: 10, at: 5 }, costUnreported: false },
      },
    };
    expect(budgetSummary(budgetView(out, budgets({ agents: { explore: { toolCalls: 10 } } }), 0))).toBe("EXCEEDED session toolCalls · toolCalls 10/10");
  });

  it("amounts as people read them", () => {
    expect(formatAmount("cost", 0.125)).toBe("$0.13");
    expect(formatAmount("activeTime", 90_000)).toBe("90s");
    expect(formatAmount("activeTime", 30 * 60_000)).toBe("30m");
    expect(formatAmount("activeTime", 2 * 3_600_000)).toBe("2h");
    expect(formatAmount("tokens", 12_345)).toBe("12.3k");
    expect(formatAmount("tokens", 2_500_000)).toBe("2.5M");
    expect(formatAmount("toolCalls", 8)).toBe("8");
  });
});
