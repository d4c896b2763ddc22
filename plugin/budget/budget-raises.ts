import { standDownStep } from "../../governance/budget/budget-check.ts";
import { grantRaise } from "../../governance/budget/budget-raise.ts";
import { budgetStep, raiseKept, treeStandDowns } from "../../governance/budget/budget-step.ts";
import type { BudgetDirective } from "../../governance/stop/directive-queue.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";

/**
 * A signed raise reached its session's queue (`opencode-governance budget … --add`): it is kept on the record, signed
 * again with the user's key, and the budget's escalation is recomputed; a budget stop stands down when nothing is
 * over any more (`budgetStep`, `raise`). A tree raise (on the root) stands down every stop the tree budget started in
 * the tree (`treeStandDowns`).
 */
export async function applyBudgetRaise(runner: EffectRunner, tracker: SessionTracker, sessionId: string, d: BudgetDirective): Promise<void> {
  const { ctx } = runner;
  // A raise is used once (its id is its nonce): a copy of a genuine signed file, queued again, adds nothing (issue 27).
  const current = runner.sessions.peek(sessionId) ?? (await ctx.store.read(sessionId));
  if (raiseKept(current ?? undefined, d.id)) {
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
  const raise = { type: "raise", grant, at } as const;
  const { next } = await runner.step(sessionId, (r) => (r ? budgetStep(r, raise, config) : { next: r, effects: [] }));
  if (d.scope !== "tree") return;
  const hosted = [...tracker.hosted()].flatMap((id) => runner.sessions.peek(id) ?? []);
  for (const id of treeStandDowns(next, hosted)) await runner.step(id, standDownStep);
}
