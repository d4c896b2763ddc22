import type { GovernanceConfig } from "../config/config.ts";
import type { SessionRecord } from "../session/session-record.ts";
import type { BudgetKey } from "./budget-config.ts";
import type { BudgetExceeded } from "./budget-state.ts";
import { verifiedRaises } from "./budget-raise.ts";
import { BUDGET_KEYS, configuredLimits, raisedLimits, sessionUsage, treeUsage } from "./budget-usage.ts";

/** One budget's use, for people (`sessions`, `status`, `budget`, the dashboard). `limit` null = no limit. */
export type BudgetUseLine = { key: BudgetKey; used: number; limit: number | null; share: number | null };

/** What `--json` and the dashboard show of a session's budgets (docs/cli.md). */
export type BudgetView = {
  session: BudgetUseLine[];
  /** The tree's budgets, on a root session only. */
  tree: BudgetUseLine[] | null;
  /** False when tokens were used but OpenCode reported no cost (no prices for the model): cost is unknown, not 0. */
  costReported: boolean;
  exceeded: (BudgetExceeded & { scope: "session" | "tree" }) | null;
};

function lines(usage: Record<BudgetKey, number>, limits: Partial<Record<BudgetKey, number>>): BudgetUseLine[] {
  return BUDGET_KEYS.map((key) => {
    const limit = limits[key] ?? null;
    const used = Math.round(usage[key] * 1e6) / 1e6;
    return { key, used, limit, share: limit === null ? null : Math.round((used / limit) * 1000) / 1000 };
  });
}

/** A session's budgets as shown to people: every key with its use, limited ones with their (raised) limit. */
export function budgetView(r: SessionRecord, config: Pick<GovernanceConfig, "budgets">, at: number): BudgetView {
  const raises = verifiedRaises(r.sessionId, r.budget.raises);
  const session = lines(sessionUsage(r, at), raisedLimits(configuredLimits(config, r), raises, "session"));
  const tree = r.parentId === null ? lines(treeUsage(r, at), raisedLimits(config.budgets.tree, raises, "tree")) : null;
  const exceeded = r.budget.session.exceeded
    ? { ...r.budget.session.exceeded, scope: "session" as const }
    : r.budget.treeEscalation.exceeded
      ? { ...r.budget.treeEscalation.exceeded, scope: "tree" as const }
      : null;
  return { session, tree, costReported: r.budget.costReported, exceeded };
}

/** Only the limited lines (what a compact view shows). */
export function limitedLines(view: readonly BudgetUseLine[]): BudgetUseLine[] {
  return view.filter((l) => l.limit !== null);
}
