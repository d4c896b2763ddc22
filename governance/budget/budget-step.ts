import type { GovernanceConfig } from "../config/config.ts";
import type { BudgetLimits } from "../config/budget-config.ts";
import type { BudgetRaise } from "../session/budget-state.ts";
import type { Effect } from "../session/effects.ts";
import type { SessionRecord } from "../session/session-record.ts";
import { BUDGET_STOP_PREFIX } from "../session/stop-origin.ts";
import { type BudgetLine, budgetStopReason, buildBudgetWarning, buildStandDownNotice } from "./budget-notices.ts";
import { applyRaise, checkBudget, type RaiseResult, takeStandDownNotice } from "./budget-check.ts";
import { verifiedRaises } from "./budget-raise.ts";
import { BUDGET_KEYS, type BudgetScope, configuredLimits, raisedLimits, sessionUsage, treeUsage } from "./budget-usage.ts";

/**
 * Budgets decided in the core (issue 29 item 2): one pure step over the record of a budget's scope — the session's own
 * record, or its tree's root — that says which limits apply, what the session is told, and whom governance stops.
 * plugin/budget/budget-guard.ts only feeds it (OpenCode's counts, the clock, the sessions this process hosts) and runs
 * what it returns. The step is a function of the record and the values passed in, so the write-behind store can
 * replay it on the stored record (plugin/sessions/session-runtime.ts `softStep`).
 */

/** A stop governance starts at L1 for a budget (or the loop guard): the ladder's request id and the reason it reads. */
export type GovernanceStop = { id: string; reason: string };

/** Configured limits, raised by the raises kept on the record whose signature still checks out. */
export function limitsOf(
  config: Pick<GovernanceConfig, "budgets">,
  scope: BudgetScope,
  r: SessionRecord,
  raises = verifiedRaises(r.sessionId, r.budget.raises),
): BudgetLimits {
  const base = scope === "tree" ? config.budgets.tree : configuredLimits(config, r);
  return raisedLimits(base, raises, scope);
}

export type BudgetEvent =
  /** A session's use moved (a tool call, a model step, tokens or cost): one look at one scope. */
  | { type: "check"; scope: BudgetScope; by: SessionRecord; at: number }
  /** A raise the user signed reached the scope's record (already signed again with this user's key). */
  | { type: "raise"; grant: BudgetRaise; at: number };

export interface BudgetStepResult {
  next: SessionRecord;
  effects: Effect[];
  /** Texts for the acting session's next tool result, in order. */
  notices: string[];
  /** The stop this step starts: on the session (`session` scope) or across the tree (`tree`: see {@link treeStopOrder}). */
  stop: (GovernanceStop & { scope: BudgetScope }) | null;
  /** A raise ended a budget stop of this record. */
  stoodDown: boolean;
}

const nothing = (r: SessionRecord): BudgetStepResult => ({ next: r, effects: [], notices: [], stop: null, stoodDown: false });

/**
 * The budget step. `check`: a session that was stopped is not looked at (its use no longer counts against anyone);
 * a scope without limits changes nothing; otherwise the scope's limits (configured + verified raises) are checked —
 * a warning becomes a notice for the acting session, an exceeded budget a stop request by governance, reason and id
 * naming the budget. `raise`: a raise already kept (same id, verified) changes nothing; else the escalation is
 * recomputed against the raised limits and a budget stop stands down when nothing is over any more.
 */
export function budgetStep(r: SessionRecord, event: BudgetEvent, config: Pick<GovernanceConfig, "budgets">): BudgetStepResult {
  if (event.type === "raise") {
    const scope = event.grant.scope;
    const kept = verifiedRaises(r.sessionId, r.budget.raises);
    if (kept.some((k) => k.id === event.grant.id)) return nothing(r);
    const usage = scope === "tree" ? treeUsage(r, event.at) : sessionUsage(r, event.at);
    const raised: RaiseResult = applyRaise(r, event.grant, usage, limitsOf(config, scope, r, [...kept, event.grant]), config.budgets.warnAt);
    return { ...nothing(raised.next), effects: raised.effects, stoodDown: raised.stoodDown };
  }
  const { scope, by, at } = event;
  if (by.control === "stopped") return nothing(r);
  const limits = limitsOf(config, scope, r);
  if (Object.keys(limits).length === 0) return nothing(r);
  const res = checkBudget(r, scope, scope === "tree" ? treeUsage(r, at) : sessionUsage(r, at), limits, config.budgets.warnAt, at);
  const notices = res.warnings.length > 0 ? [buildBudgetWarning(res.warnings)] : [];
  const line = res.exceeded;
  const stop = line
    ? { scope, id: `${BUDGET_STOP_PREFIX}${scope}-${line.key}-${at}`, reason: budgetStopReason(line, scope === "session" ? res.next.agent : null) }
    : null;
  return { next: res.next, effects: res.effects, notices, stop, stoodDown: false };
}

/**
 * Whether a budget stop a check decided still stands when its first step runs: the two are apart (the exceedance's
 * audit lines are written in between), and a raise applied meanwhile clears the scope's exceeded mark — the stop would
 * then hold a session under its raised limit (found by the generated histories, test/plugin/lifecycle-model.test.ts).
 * `scopeRecord` is the budget's record as it is now: the session's own, or its tree's root.
 */
export function budgetStopStands(scope: BudgetScope, scopeRecord: SessionRecord | undefined): boolean {
  const escalation = scope === "tree" ? scopeRecord?.budget.treeEscalation : scopeRecord?.budget.session;
  return (escalation?.exceeded ?? null) !== null;
}

/**
 * Whom a tree budget stops: every session of the tree this process hosts that is still at work, the root last (its
 * children are stopped before the session that would wait for them). Sessions already stopping or stopped are left
 * to the stop they have.
 */
export function treeStopOrder(root: SessionRecord, hosted: readonly SessionRecord[]): string[] {
  const members = hosted.filter((r) => r.sessionId !== root.sessionId && r.rootId === root.sessionId && r.control === "active").map((r) => r.sessionId);
  return root.control === "active" ? [...members, root.sessionId] : members;
}

/**
 * Whom a tree raise stands down besides the root: when the root's tree budget is no longer exceeded, every session of
 * the tree whose stop the tree budget started (never a user's stop, never a session budget's).
 */
export function treeStandDowns(root: SessionRecord | undefined, hosted: readonly SessionRecord[]): string[] {
  if (!root || root.parentId !== null || root.budget.treeEscalation.exceeded !== null) return [];
  return hosted
    .filter((r) => r.sessionId !== root.sessionId && r.rootId === root.sessionId && (r.stop?.requestId.startsWith(`${BUDGET_STOP_PREFIX}tree`) ?? false))
    .map((r) => r.sessionId);
}

/** A raise is used once (its id is its nonce): one already kept on the record, verified, is a replay (issue 27). */
export function raiseKept(record: SessionRecord | undefined, raiseId: string): boolean {
  return record !== undefined && verifiedRaises(record.sessionId, record.budget.raises).some((r) => r.id === raiseId);
}

/**
 * A raise stood this session's budget stop down: while it is at work it is told once, on its next tool result, that it
 * may go on, with what is left ({@link standDownText}); the mark is taken (audited `budget_resumed`). `root` is the
 * tree's root as the caller last saw it (the record itself when it is the root).
 */
export function takeStandDown(
  r: SessionRecord,
  config: Pick<GovernanceConfig, "budgets">,
  root: SessionRecord | undefined,
  at: number,
): { next: SessionRecord; effects: Effect[]; text: string | null } {
  if (!r.budget.stoodDown || r.control !== "active") return { next: r, effects: [], text: null };
  const taken = takeStandDownNotice(r);
  return { next: taken.next, effects: taken.effects, text: standDownText(config, r, root?.sessionId === r.sessionId ? taken.next : root, at) };
}

/** What a stood-down session is told it has left: each limit of its own and of its tree, with what is used. */
export function standDownText(config: Pick<GovernanceConfig, "budgets">, record: SessionRecord, root: SessionRecord | undefined, at: number): string {
  const lines: BudgetLine[] = [];
  const own = limitsOf(config, "session", record);
  const use = sessionUsage(record, at);
  for (const key of BUDGET_KEYS) if (own[key] !== undefined) lines.push({ key, used: use[key], limit: own[key] as number, scope: "session" });
  if (root) {
    const tree = limitsOf(config, "tree", root);
    const treeUse = treeUsage(root, at);
    for (const key of BUDGET_KEYS) if (tree[key] !== undefined) lines.push({ key, used: treeUse[key], limit: tree[key] as number, scope: "tree" });
  }
  return buildStandDownNotice(lines);
}
