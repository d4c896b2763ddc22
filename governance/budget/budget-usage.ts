import type { GovernanceConfig } from "../config/config.ts";
import type { SessionRecord } from "../session/session-record.ts";
import type { BudgetAmounts, BudgetKey, BudgetLimits } from "../config/budget-config.ts";
import { BUDGET_KEYS as KIND_KEYS } from "../config/budget-kinds.ts";
import {
  type BudgetRaise,
  type BudgetState,
  EMPTY_BUDGET,
  type MessageUse,
  NO_MESSAGE_TOTALS,
  NO_TREE_USE,
  type TokenUse,
  type TreeUse,
} from "../session/budget-state.ts";

/** Use against every budget key: counts, milliseconds (activeTime) and US dollars (cost). */
export type Usage = Record<BudgetKey, number>;
export type BudgetScope = "session" | "tree";
export const BUDGET_KEYS: readonly BudgetKey[] = KIND_KEYS;

export function totalTokens(t: TokenUse): number {
  return t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite;
}

/** Busy time so far: closed intervals plus the open one. */
export function activeMs(b: BudgetState, at: number): number {
  return b.activeMs + (b.busySince === null ? 0 : Math.max(0, at - b.busySince));
}

/** What one kind's count is read from: a session's own record, and a tree's root record. */
type Counted = { session: (r: SessionRecord, at: number) => number; tree: (root: SessionRecord, at: number) => number };
const tree = (root: SessionRecord): TreeUse => root.budget.tree ?? NO_TREE_USE;
const own = (r: SessionRecord): BudgetState => r.budget ?? EMPTY_BUDGET;
const tokensOf = (pick: (t: TokenUse) => number): Counted => ({ session: (r) => pick(own(r).tokens), tree: (root) => pick(tree(root).tokens) });

/**
 * How each kind of budget-kinds.ts is counted — the counting step of a kind, and the one place beside the table a new
 * kind must be added (the compiler refuses a kind without its entry). Model requests and tool calls are the record's
 * own counters; tokens and cost what OpenCode reports; a tree's totals are kept on its root's record, except active
 * time: a tree's is its root's busy time (a foreground subagent keeps its parent busy, so this is the wall time the
 * request has been running).
 */
const COUNTED: Record<BudgetKey, Counted> = {
  modelRequests: { session: (r) => r.counters.modelSteps, tree: (root) => tree(root).modelRequests },
  toolCalls: { session: (r) => r.counters.toolCalls, tree: (root) => tree(root).toolCalls },
  activeTime: { session: (r, at) => activeMs(own(r), at), tree: (root, at) => activeMs(root.budget, at) },
  tokens: tokensOf(totalTokens),
  inputTokens: tokensOf((t) => t.input),
  outputTokens: tokensOf((t) => t.output),
  reasoningTokens: tokensOf((t) => t.reasoning),
  cacheReadTokens: tokensOf((t) => t.cacheRead),
  cacheWriteTokens: tokensOf((t) => t.cacheWrite),
  cost: { session: (r) => own(r).cost, tree: (root) => tree(root).cost },
};

function usage(scope: BudgetScope, r: SessionRecord, at: number): Usage {
  const out = {} as Usage;
  for (const key of BUDGET_KEYS) out[key] = COUNTED[key][scope](r, at);
  return out;
}

/** A session's own use. O(1). */
export function sessionUsage(r: SessionRecord, at: number): Usage {
  return usage("session", r, at);
}

/** A task tree's use, from its root's record: totals of every session in the tree (COUNTED says how). */
export function treeUsage(root: SessionRecord, at: number): Usage {
  return usage("tree", root, at);
}

/** The configured limits of a session: its agent's entry, else the default for subagents, else none (a root). */
export function configuredLimits(config: Pick<GovernanceConfig, "budgets">, r: Pick<SessionRecord, "agent" | "depth">): BudgetLimits {
  const own = r.agent !== null ? config.budgets.agents[r.agent] : undefined;
  if (own) return own;
  return r.depth > 0 ? config.budgets.default : {};
}

/** Limits plus the raises of one scope (only raises that passed verification should be passed in). */
export function raisedLimits(limits: BudgetLimits, raises: readonly BudgetRaise[], scope: BudgetScope): BudgetLimits {
  let out: BudgetLimits = limits;
  for (const raise of raises) {
    if (raise.scope !== scope) continue;
    out = addAmounts(out, raise.add);
  }
  return out;
}

/**
 * An amount as governance states it: rounded to a millionth. Sums of dollar figures in binary floating point carry
 * noise (0.348 + … = 0.34800000000000003, 0.4 + 0.2 = 0.6000000000000001) that would reach the audit log, hooks and
 * `--json`; no cost OpenCode reports is finer than a millionth of a dollar, and counts are whole numbers anyway.
 */
export function roundAmount(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** Adds amounts to the limits that exist (a raise of a budget with no limit changes nothing: there is none to raise). */
export function addAmounts(limits: BudgetLimits, add: BudgetAmounts): BudgetLimits {
  const out: Record<string, number> = { ...limits } as Record<string, number>;
  for (const key of BUDGET_KEYS) {
    const extra = add[key];
    const base = out[key];
    if (extra !== undefined && base !== undefined) out[key] = roundAmount(base + extra);
  }
  return out as BudgetLimits;
}

/** What a session reported between two looks, for the tree's totals. */
export type UseDelta = { modelRequests?: number; toolCalls?: number; tokens?: TokenUse; cost?: number };

/** Adds a delta to a root's tree totals. Not a root (or nothing to add): the record unchanged. */
export function addTreeUse(root: SessionRecord, delta: UseDelta): SessionRecord {
  if (root.parentId !== null) return root;
  const t: TreeUse = root.budget.tree ?? NO_TREE_USE;
  const d = delta.tokens;
  const tree: TreeUse = {
    modelRequests: t.modelRequests + (delta.modelRequests ?? 0),
    toolCalls: t.toolCalls + (delta.toolCalls ?? 0),
    tokens: d
      ? {
          input: t.tokens.input + d.input,
          output: t.tokens.output + d.output,
          reasoning: t.tokens.reasoning + d.reasoning,
          cacheRead: t.tokens.cacheRead + d.cacheRead,
          cacheWrite: t.tokens.cacheWrite + d.cacheWrite,
        }
      : t.tokens,
    cost: t.cost + (delta.cost ?? 0),
  };
  return { ...root, budget: { ...root.budget, tree } };
}

/** OpenCode's running totals for a session (its `session.updated` info: `tokens`, `cost`). */
export type ReportedUse = { tokens: TokenUse; cost: number };

/**
 * Takes OpenCode's totals for a session (absolute, so a repeated event changes nothing) and returns the increase for
 * the tree. Totals never go down: a smaller report (another process's view, a replay) is ignored. `costReported` is
 * false while tokens were used and OpenCode computed no cost: the provider's model has no prices, and governance
 * says so rather than guess.
 */
export function takeReportedUse(r: SessionRecord, reported: ReportedUse): { next: SessionRecord; delta: UseDelta } {
  return raiseTotals(r, reported, r.budget);
}

const maxTokens = (a: TokenUse, b: TokenUse): TokenUse => ({
  input: Math.max(a.input, b.input),
  output: Math.max(a.output, b.output),
  reasoning: Math.max(a.reasoning, b.reasoning),
  cacheRead: Math.max(a.cacheRead, b.cacheRead),
  cacheWrite: Math.max(a.cacheWrite, b.cacheWrite),
});
const addTokens = (a: TokenUse, b: TokenUse, sign = 1): TokenUse => ({
  input: a.input + sign * b.input,
  output: a.output + sign * b.output,
  reasoning: a.reasoning + sign * b.reasoning,
  cacheRead: a.cacheRead + sign * b.cacheRead,
  cacheWrite: a.cacheWrite + sign * b.cacheWrite,
});

/**
 * One assistant message's use (`message.updated`: its own `tokens` and `cost`). The session's message sum takes the
 * message once, at its largest report (an update of a recent message adds only its growth), and the session's totals
 * are raised to that sum when it is larger: after an abort OpenCode sends the aborted step's cost on its message but
 * no final `session.updated`, and governance's totals still equal OpenCode's own (issue 28 §1). Never double: the
 * totals are the larger of OpenCode's session totals and the message sum, never their sum.
 */
export function takeMessageUse(r: SessionRecord, message: MessageUse): { next: SessionRecord; delta: UseDelta } {
  const m = r.budget.messages ?? NO_MESSAGE_TOTALS;
  const before = m.recent.find((x) => x.id === message.id);
  const seen: MessageUse = before ? { id: message.id, tokens: maxTokens(before.tokens, message.tokens), cost: Math.max(before.cost, message.cost) } : message;
  const growth = before ? addTokens(seen.tokens, before.tokens, -1) : seen.tokens;
  const costGrowth = before ? seen.cost - before.cost : seen.cost;
  if (totalTokens(growth) === 0 && costGrowth === 0 && before) return { next: r, delta: {} };
  const messages = {
    tokens: addTokens(m.tokens, growth),
    cost: m.cost + costGrowth,
    recent: [...m.recent.filter((x) => x.id !== message.id), seen].slice(-8),
  };
  const withSum = { ...r, budget: { ...r.budget, messages } };
  const raised = raiseTotals(withSum, { tokens: messages.tokens, cost: messages.cost }, r.budget);
  return raised.next === withSum ? { next: withSum, delta: {} } : raised;
}

/** Totals raised to `reported` where it is larger (totals never go down); the increase goes to the tree. */
function raiseTotals(r: SessionRecord, reported: ReportedUse, b: BudgetState): { next: SessionRecord; delta: UseDelta } {
  const t = reported.tokens;
  const grow = (now: number, before: number) => Math.max(0, now - before);
  const delta: UseDelta = {
    tokens: {
      input: grow(t.input, b.tokens.input),
      output: grow(t.output, b.tokens.output),
      reasoning: grow(t.reasoning, b.tokens.reasoning),
      cacheRead: grow(t.cacheRead, b.tokens.cacheRead),
      cacheWrite: grow(t.cacheWrite, b.tokens.cacheWrite),
    },
    cost: grow(reported.cost, b.cost),
  };
  const d = delta.tokens as TokenUse;
  if (totalTokens(d) === 0 && delta.cost === 0) return { next: r, delta: {} };
  const tokens = addTokens(b.tokens, d);
  const cost = b.cost + (delta.cost ?? 0);
  return { next: { ...r, budget: { ...r.budget, tokens, cost, costReported: cost > 0 || totalTokens(tokens) === 0 } }, delta };
}

/** `session.status` busy/idle: opens or closes an interval of active time. Repeats change nothing. */
export function markBusy(r: SessionRecord, busy: boolean, at: number): SessionRecord {
  const b = r.budget;
  if (busy) return b.busySince !== null ? r : { ...r, budget: { ...b, busySince: at } };
  if (b.busySince === null) return r;
  return { ...r, budget: { ...b, activeMs: b.activeMs + Math.max(0, at - b.busySince), busySince: null } };
}
