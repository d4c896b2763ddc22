import type { GovernanceConfig } from "../config/config.ts";
import type { SessionRecord } from "../session/session-record.ts";
import type { BudgetKey } from "../config/budget-config.ts";
import type { BudgetExceeded } from "../session/budget-state.ts";
import { formatAmount } from "../config/budget-units.ts";
import { verifiedRaises } from "./budget-raise.ts";
import { BUDGET_KEYS, configuredLimits, raisedLimits, sessionUsage, treeUsage } from "./budget-usage.ts";

/** One budget's use, for people (`sessions`, `status`, `budget`, the dashboard). `limit` null = no limit. */
export type BudgetUseLine = {
  key: BudgetKey;
  used: number;
  limit: number | null;
  share: number | null;
  /** Which config layer set the limit (`organisation`, `user`, `project`, `default`; the dashboard, issue 30). */
  from?: string;
};

/** The config path a session's limit of `key` comes from (configuredLimits' choice: its agent's entry, else the default). */
export function budgetLimitPath(
  config: Pick<GovernanceConfig, "budgets">,
  r: Pick<SessionRecord, "agent" | "depth">,
  scope: "session" | "tree",
  key: BudgetKey,
): string | null {
  if (scope === "tree") return `budgets.tree.${key}`;
  if (r.agent !== null && Object.hasOwn(config.budgets.agents, r.agent)) return `budgets.agents.${r.agent}.${key}`;
  return r.depth > 0 ? `budgets.default.${key}` : null;
}

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

const compact = (l: BudgetUseLine) => `${l.key} ${formatAmount(l.key, l.used, l.limit ?? l.used)}/${formatAmount(l.key, l.limit ?? 0, l.limit ?? 0)}`;

/**
 * The limited budgets in one line, for `sessions` and `status`: "toolCalls 8/1000 · activeTime 3m/2h", the tree's
 * after "tree:" on a root, "cost unknown" where a cost limit meets a provider that reports none. "" when nothing
 * is limited.
 */
export function budgetSummary(view: BudgetView): string {
  const parts = limitedLines(view.session).map(compact);
  const tree = limitedLines(view.tree ?? []).map(compact);
  if (tree.length > 0) parts.push(`tree: ${tree.join(" · ")}`);
  const costLimited = [...view.session, ...(view.tree ?? [])].some((l) => l.key === "cost" && l.limit !== null);
  if (costLimited && !view.costReported) parts.push("cost unknown (no prices reported)");
  if (view.exceeded) parts.unshift(`EXCEEDED ${view.exceeded.scope} ${view.exceeded.key}`);
  return parts.join(" · ");
}

/** The fullest limited budget of a scope (what a bar shows), or null when none is limited. */
export function fullestLine(lines: readonly BudgetUseLine[]): BudgetUseLine | null {
  let best: BudgetUseLine | null = null;
  for (const l of limitedLines(lines)) if (best === null || (l.share ?? 0) > (best.share ?? 0)) best = l;
  return best;
}
