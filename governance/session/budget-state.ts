import * as z from "../zod.ts";
import { BudgetAmounts, BudgetKey } from "../config/budget-config.ts";

/** Bounds for counters read back from disk: a record claiming more is refused like any malformed record. */
const MAX_USED = 1e15;
const Used = z.number().min(0).max(MAX_USED);
const UsedInt = z.number().int().min(0).max(MAX_USED);

/** Tokens as OpenCode reports them for a session (`input` excludes cache reads). */
export const TokenUse = z.object({
  input: UsedInt.default(0),
  output: UsedInt.default(0),
  reasoning: UsedInt.default(0),
  cacheRead: UsedInt.default(0),
  cacheWrite: UsedInt.default(0),
});
export type TokenUse = z.infer<typeof TokenUse>;
export const NO_TOKENS: TokenUse = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };

/** A budget that ran out: which one, how much was used of how much, and when. */
export const BudgetExceeded = z.object({ key: BudgetKey, used: Used, limit: Used, at: z.number().int() });
export type BudgetExceeded = z.infer<typeof BudgetExceeded>;

/** Escalation of one scope (the session's own budget, or the tree's on the root's record). */
export const BudgetEscalation = z.object({
  /** Budgets whose warning was given (once each, until a raise brings them back under the threshold). */
  warned: z.array(BudgetKey).max(20).default([]),
  exceeded: BudgetExceeded.nullable().default(null),
  /** A cost budget that cannot fire (tokens used, OpenCode reports cost 0: no prices) was said, once. */
  costUnreported: z.boolean().default(false),
});
export type BudgetEscalation = z.infer<typeof BudgetEscalation>;
export const NO_ESCALATION: BudgetEscalation = { warned: [], exceeded: null, costUnreported: false };

/**
 * A raise the user made (`opencode-governance budget … --add`), as this process accepted it from a signed queue file,
 * signed again with the user's key (which lives outside every project). A record that claims a raise whose signature
 * does not check out gets nothing from it (`verifiedRaises`).
 */
export const BudgetRaise = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/),
  at: z.number().int(),
  scope: z.enum(["session", "tree"]),
  add: BudgetAmounts,
  by: z.string().max(100),
  sig: z.string().max(200),
});
export type BudgetRaise = z.infer<typeof BudgetRaise>;

/** Totals of a task tree, kept on its root's record (the root's own use included). */
export const TreeUse = z.object({
  modelRequests: UsedInt.default(0),
  toolCalls: UsedInt.default(0),
  tokens: TokenUse.default(NO_TOKENS),
  cost: Used.default(0),
});
export type TreeUse = z.infer<typeof TreeUse>;
export const NO_TREE_USE: TreeUse = { modelRequests: 0, toolCalls: 0, tokens: NO_TOKENS, cost: 0 };

/** One assistant message's own use, as OpenCode's `message.updated` reports it. */
export const MessageUse = z.object({ id: z.string().max(100), tokens: TokenUse.default(NO_TOKENS), cost: Used.default(0) });
export type MessageUse = z.infer<typeof MessageUse>;

/**
 * The session's use summed from its assistant messages (each message counted once, at its largest report): OpenCode's
 * own total is this sum, and it is what governance has when OpenCode sends no final `session.updated` (an abort).
 */
export const MessageTotals = z.object({
  tokens: TokenUse.default(NO_TOKENS),
  cost: Used.default(0),
  /** The last few messages seen, to tell a message's update from a new message. */
  recent: z.array(MessageUse).max(8).default([]),
});
export type MessageTotals = z.infer<typeof MessageTotals>;
export const NO_MESSAGE_TOTALS: MessageTotals = { tokens: NO_TOKENS, cost: 0, recent: [] };

/**
 * A session's use and escalation beyond `counters` (which already count model requests and tool calls). Active time
 * is busy time: `activeMs` closed intervals plus the open one since `busySince`.
 */
export const BudgetState = z.object({
  tokens: TokenUse.default(NO_TOKENS),
  cost: Used.default(0),
  /** False while tokens were used but OpenCode reported no cost (a provider or model without prices). */
  costReported: z.boolean().default(true),
  /** Use summed from the session's assistant messages (`message.updated`); `tokens`/`cost` are never below it. */
  messages: MessageTotals.default(NO_MESSAGE_TOTALS),
  activeMs: UsedInt.default(0),
  busySince: z.number().int().nullable().default(null),
  session: BudgetEscalation.default(NO_ESCALATION),
  /** Root sessions only: the tree's totals and escalation. */
  tree: TreeUse.nullable().default(null),
  treeEscalation: BudgetEscalation.default(NO_ESCALATION),
  raises: z.array(BudgetRaise).max(50).default([]),
  /** A raise stood a budget stop down and the session has not been told yet (told once, on its next tool result). */
  stoodDown: z.enum(["session", "tree"]).nullable().default(null),
});
export type BudgetState = z.infer<typeof BudgetState>;

export const EMPTY_BUDGET: BudgetState = {
  tokens: NO_TOKENS,
  cost: 0,
  costReported: true,
  messages: NO_MESSAGE_TOTALS,
  activeMs: 0,
  busySince: null,
  session: NO_ESCALATION,
  tree: null,
  treeEscalation: NO_ESCALATION,
  raises: [],
  stoodDown: null,
};
