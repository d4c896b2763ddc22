import { applyRaise, BUDGET_STOP_PREFIX, standDownStep } from "../../governance/budget/budget-check.ts";
import { grantRaise, verifiedRaises } from "../../governance/budget/budget-raise.ts";
import { configuredLimits, raisedLimits, sessionUsage, treeUsage } from "../../governance/budget/budget-usage.ts";
import type { BudgetDirective } from "../../governance/stop/directive-queue.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";

/**
 * A signed raise reached its session's queue (`opencode-governance budget … --add`): it is kept on the record, signed
 * again with the user's key, and the budget's escalation is recomputed; a budget stop stands down when nothing is
 * over any more. A tree raise (on the root) stands down every stop the tree budget started in the tree.
 */
export async function applyBudgetRaise(runner: EffectRunner, tracker: SessionTracker, sessionId: string, d: BudgetDirective): Promise<void> {
  const { ctx } = runner;
  // A raise is used once (its id is its nonce): a copy of a genuine signed file, queued again, adds nothing (issue 27).
  const current = runner.sessions.peek(sessionId) ?? (await ctx.store.read(sessionId));
  if (current && verifiedRaises(sessionId, current.budget.raises).some((r) => r.id === d.id)) {
    await ctx.record("directive_replayed", { sessionId, directiveId: d.id, kind: "budget", by: d.by });
    return;
  }
  const grant = grantRaise(sessionId, { id: d.id, at: d.at, scope: d.scope, add: d.add, by: d.by });
  if (!grant) {
    await ctx.record("directive_rejected", { sessionId, directiveId: d.id, reason: "no signing key: the raise cannot be kept" });
    return;
  }
  const { config, clock } = ctx;
  const at = clock.now();
  const { next } = await runner.step(sessionId, (r) => {
    if (!r) return { next: r, effects: [], stoodDown: false };
    const kept = verifiedRaises(sessionId, r.budget.raises);
    if (kept.some((k) => k.id === grant.id)) return { next: r, effects: [], stoodDown: false };
    const raises = [...kept, grant];
    const base = d.scope === "tree" ? config.budgets.tree : configuredLimits(config, r);
    const usage = d.scope === "tree" ? treeUsage(r, at) : sessionUsage(r, at);
    return applyRaise(r, grant, usage, raisedLimits(base, raises, d.scope), config.budgets.warnAt);
  });
  if (d.scope !== "tree" || !next || next.parentId !== null || next.budget.treeEscalation.exceeded !== null) return;
  for (const id of tracker.hosted()) {
    const r = runner.sessions.peek(id);
    if (id !== sessionId && r?.rootId === sessionId && r.stop?.requestId.startsWith(`${BUDGET_STOP_PREFIX}tree`)) await runner.step(id, standDownStep);
  }
}
