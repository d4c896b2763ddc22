import { takeStandDownNotice } from "../../governance/budget/budget-check.ts";
import { verifiedRaises } from "../../governance/budget/budget-raise.ts";
import { BUDGET_KEYS, configuredLimits, raisedLimits, sessionUsage, treeUsage } from "../../governance/budget/budget-usage.ts";
import { type BudgetLine, buildStandDownNotice } from "../../governance/texts/budget-notices.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";

/**
 * A raise stood this session's budget stop down (docs/budgets.md): it is told once, on its next tool result, that it
 * may go on, with what is left of its own budgets and its tree's. The mark lives on the record, so it survives the
 * session going idle in between; taking it is a soft step (written behind) and audited `budget_resumed`.
 */
export async function standDownNotice(runner: EffectRunner, sessionId: string): Promise<string | undefined> {
  const record = runner.sessions.peek(sessionId);
  if (!record?.budget.stoodDown || record.control !== "active") return undefined;
  const res = runner.sessions.softStep(sessionId, takeStandDownNotice);
  if (!res?.scope) return undefined;
  await runner.run(sessionId, res.effects, res);
  const { config, clock } = runner.ctx;
  const at = clock.now();
  const lines: BudgetLine[] = [];
  const own = raisedLimits(configuredLimits(config, record), verifiedRaises(sessionId, record.budget.raises), "session");
  const use = sessionUsage(record, at);
  for (const key of BUDGET_KEYS) if (own[key] !== undefined) lines.push({ key, used: use[key], limit: own[key] as number, scope: "session" });
  const root = runner.sessions.peek(record.rootId);
  if (root) {
    const tree = raisedLimits(config.budgets.tree, verifiedRaises(root.sessionId, root.budget.raises), "tree");
    const treeUse = treeUsage(root, at);
    for (const key of BUDGET_KEYS) if (tree[key] !== undefined) lines.push({ key, used: treeUse[key], limit: tree[key] as number, scope: "tree" });
  }
  return buildStandDownNotice(lines);
}
