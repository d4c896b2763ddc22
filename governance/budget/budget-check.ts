import { BUDGET_STOP_PREFIX } from "../session/stop-origin.ts";
import { audit, type Effect } from "../session/effects.ts";
import type { SessionRecord } from "../session/session-record.ts";
import { type BudgetLine, formatUse } from "./budget-notices.ts";
import type { BudgetKey, BudgetLimits } from "../config/budget-config.ts";
import type { BudgetEscalation, BudgetRaise } from "../session/budget-state.ts";
import { BUDGET_KEYS, type BudgetScope, type Usage } from "./budget-usage.ts";

/** Stop requests a budget starts carry this prefix: a raise stands down only these, never a user's own stop. */
export { BUDGET_STOP_PREFIX };

export interface BudgetCheck {
  next: SessionRecord;
  effects: Effect[];
  /** Budgets that passed the warning threshold with this check (each once): the session's next tool result says so. */
  warnings: BudgetLine[];
  /** The budget that ran out with this check: the adapter starts the stop ladder with it as the reason. */
  exceeded: BudgetLine | null;
}

const escalationOf = (r: SessionRecord, scope: BudgetScope): BudgetEscalation => (scope === "session" ? r.budget.session : r.budget.treeEscalation);
function withEscalation(r: SessionRecord, scope: BudgetScope, e: BudgetEscalation): SessionRecord {
  return { ...r, budget: scope === "session" ? { ...r.budget, session: e } : { ...r.budget, treeEscalation: e } };
}

/**
 * One look at one scope's budgets (the session's own on its record, or the tree's on the root's record). O(keys).
 * At `warnAt` × limit a budget is warned once; at its limit it is exceeded, once: the first key over wins and later
 * checks change nothing until a raise clears it. Returns the same record object when nothing changed, so a caller
 * on the hot path writes nothing.
 */
export function checkBudget(r: SessionRecord, scope: BudgetScope, usage: Usage, limits: BudgetLimits, warnAt: number, at: number): BudgetCheck {
  const e0 = escalationOf(r, scope);
  const unpriced = costCannotWork(e0, usage, limits);
  const said = unpriced ? costUnreportedSaid(r, scope, usage, limits) : null;
  const r1 = said ? withEscalation(r, scope, { ...e0, costUnreported: true }) : r;
  const e = escalationOf(r1, scope);
  const none: BudgetCheck = { next: r1, effects: said ? said.effects : [], warnings: [], exceeded: null };
  if (e.exceeded !== null) return none;
  let warned: BudgetKey[] | null = null;
  const warnings: BudgetLine[] = [];
  for (const key of BUDGET_KEYS) {
    const limit = limits[key];
    if (limit === undefined) continue;
    const used = usage[key];
    if (used >= limit) {
      const line: BudgetLine = { key, used, limit, scope };
      const next = withEscalation(r1, scope, { ...e, warned: warned ?? e.warned, exceeded: { key, used, limit, at } });
      const effects: Effect[] = [
        ...none.effects,
        audit("budget_exceeded", { scope, key, used, limit, rootId: r.rootId }),
        {
          type: "toast",
          message: `Budget exceeded (${scope === "tree" ? "task tree" : (r.agent ?? "session")}): ${formatUse(key, used, limit)}. Governance is stopping it.`,
          variant: "warning",
        },
      ];
      return { next, effects, warnings: [], exceeded: line };
    }
    if (used >= warnAt * limit && !e.warned.includes(key)) {
      warned = [...(warned ?? e.warned), key];
      warnings.push({ key, used, limit, scope });
    }
  }
  if (warned === null) return none;
  const effects = [...none.effects, ...warnings.map((w) => audit("budget_warning", { scope, key: w.key, used: w.used, limit: w.limit, rootId: r.rootId }))];
  return { next: withEscalation(r1, scope, { ...e, warned, exceeded: null }), effects, warnings, exceeded: null };
}

/** A cost limit, tokens used, and OpenCode reported no cost: the provider's model has no prices; the budget cannot fire. */
function costCannotWork(e: BudgetEscalation, usage: Usage, limits: BudgetLimits): boolean {
  return limits.cost !== undefined && usage.tokens > 0 && usage.cost === 0 && !e.costUnreported;
}

/** Said once per scope where the user looks: an audit line and a toast (`status` and `doctor` read the mark). */
function costUnreportedSaid(r: SessionRecord, scope: BudgetScope, usage: Usage, limits: BudgetLimits): { effects: Effect[] } {
  const whose = scope === "tree" ? "the task tree" : (r.agent ?? r.sessionId);
  return {
    effects: [
      audit("budget_cost_unreported", { scope, limit: limits.cost, tokens: usage.tokens, agent: r.agent, rootId: r.rootId }),
      {
        type: "toast",
        message: `The cost budget of ${whose} cannot work: the provider reports no prices (${usage.tokens} tokens used, cost 0). Set prices in the OpenCode config or use a token budget.`,
        variant: "warning",
      },
    ],
  };
}

export interface RaiseResult {
  next: SessionRecord;
  effects: Effect[];
  /** True when this raise ended a budget stop of this session (the ladder stands down). */
  stoodDown: boolean;
}

/**
 * A raise the user signed, on the record of its scope (the session, or the tree's root). Kept with the record;
 * the scope's escalation is recomputed against the raised limits: warnings below the threshold again are forgotten,
 * and when nothing is over any more the exceeded mark is cleared and a stop this budget started stands down. A raise
 * already applied (same id) changes nothing.
 */
export function applyRaise(r: SessionRecord, raise: BudgetRaise, usage: Usage, raisedLimits: BudgetLimits, warnAt: number): RaiseResult {
  if (r.budget.raises.some((x) => x.id === raise.id)) return { next: r, effects: [], stoodDown: false };
  const scope = raise.scope;
  const e = escalationOf(r, scope);
  const over = BUDGET_KEYS.some((k) => raisedLimits[k] !== undefined && usage[k] >= (raisedLimits[k] as number));
  const warned = e.warned.filter((k) => raisedLimits[k] !== undefined && usage[k] >= warnAt * (raisedLimits[k] as number));
  let next = withEscalation({ ...r, budget: { ...r.budget, raises: [...r.budget.raises, raise].slice(-50) } }, scope, {
    ...e,
    warned,
    exceeded: over ? e.exceeded : null,
  });
  const stood = !over && e.exceeded !== null ? standDown(next, scope) : { next, stoodDown: false };
  next = stood.next;
  const effects: Effect[] = [audit("budget_raised", { scope, add: raise.add, by: raise.by, raiseId: raise.id, stillOver: over, stoodDown: stood.stoodDown })];
  if (stood.stoodDown) effects.push({ type: "toast", message: `Budget raised: ${r.agent ?? r.sessionId} may go on.`, variant: "info" });
  return { next, effects, stoodDown: stood.stoodDown };
}

/**
 * Ends a stop that a budget started (never a user's stop): control back to `active`. A session the ladder already
 * terminated may then be prompted again (the parent can continue it with the task's `task_id`).
 */
export function standDown(r: SessionRecord, scope: BudgetScope = "session"): { next: SessionRecord; stoodDown: boolean } {
  const byBudget = r.stop?.requestId.startsWith(BUDGET_STOP_PREFIX) ?? false;
  if (!byBudget || (r.control !== "stopping" && r.control !== "stopped")) return { next: r, stoodDown: false };
  // The session is told once that it may go on, with what is left (`takeStandDownNotice`).
  return { next: { ...r, control: "active", stop: null, stoppedAt: null, budget: { ...r.budget, stoodDown: scope } }, stoodDown: true };
}

/** The pending "you may continue" of a stood-down session, taken once: the record without it, and its scope. */
export function takeStandDownNotice(r: SessionRecord): { next: SessionRecord; effects: Effect[]; scope: BudgetScope | null } {
  const scope = r.budget.stoodDown ?? null;
  if (scope === null) return { next: r, effects: [], scope };
  return { next: { ...r, budget: { ...r.budget, stoodDown: null } }, effects: [audit("budget_resumed", { scope })], scope };
}

/** Clears a tree's exceeded mark on a descendant's own stop (a tree raise stands the whole tree down). */
export function standDownStep(r: SessionRecord | undefined): { next: SessionRecord | undefined; effects: Effect[] } {
  if (!r) return { next: r, effects: [] };
  const s = standDown(r, "tree");
  return { next: s.next, effects: s.stoodDown ? [audit("budget_raised", { scope: "tree", stoodDown: true, via: "root" })] : [] };
}
