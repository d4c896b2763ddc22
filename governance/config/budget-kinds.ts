/**
 * Every budget kind in one table (issue 42 item 3, docs/decisions/0077-budget-kinds.md): its key, unit, label, bounds
 * and whether it is a spend. `BudgetKey` is this table's keys, so a kind cannot be half there; what a unit means —
 * how its amounts are parsed, bounded and written — is budget-units.ts, and how each kind is counted is the
 * `Record<BudgetKey, …>` in governance/budget/budget-usage.ts, which the compiler holds to this table.
 *
 * It lives in config/ (not budget/) because the config's schemas are built from it, and config/ sits below budget/
 * (test/architecture/folder-order.test.ts).
 */

/** How a kind's amounts are measured: a whole count, milliseconds of a duration, US dollars. */
export type BudgetUnit = "count" | "ms" | "usd";

export type KindSpec = {
  unit: BudgetUnit;
  /** The words after a figure: "8 of 10 tool calls", "24m of 30m active time", "$1.62 of $2.00 cost". */
  label: string;
  /** The smallest limit (a duration's; a count's is 1, a dollar amount's anything above 0). */
  min?: number;
  /** Above this a value is not a limit but a typo, refused with a message naming the key. */
  max: number;
  /**
   * A spend: what OpenCode itself reports, appended to the day's and week's ledgers, so a cap over time
   * (`budgets.project|user.daily|weekly`) may limit it. Tool calls and active time are a session's matter.
   */
  spend: boolean;
};

const MAX_COUNT = 1_000_000;
const MAX_TOKENS = 10_000_000_000;

/** The budget kinds, in the order they are shown (config errors, `budget`, `status`, the dashboard's tooltip). */
export const BUDGET_KINDS = {
  modelRequests: { unit: "count", label: "model requests", max: MAX_COUNT, spend: true },
  toolCalls: { unit: "count", label: "tool calls", max: MAX_COUNT, spend: false },
  activeTime: { unit: "ms", label: "active time", min: 1_000, max: 7 * 24 * 3_600_000, spend: false },
  tokens: { unit: "count", label: "tokens", max: MAX_TOKENS, spend: true },
  inputTokens: { unit: "count", label: "input tokens", max: MAX_TOKENS, spend: true },
  outputTokens: { unit: "count", label: "output tokens", max: MAX_TOKENS, spend: true },
  reasoningTokens: { unit: "count", label: "reasoning tokens", max: MAX_TOKENS, spend: true },
  cacheReadTokens: { unit: "count", label: "cache-read tokens", max: MAX_TOKENS, spend: true },
  cacheWriteTokens: { unit: "count", label: "cache-write tokens", max: MAX_TOKENS, spend: true },
  cost: { unit: "usd", label: "cost", max: 100_000, spend: true },
} as const satisfies Record<string, KindSpec>;

export type BudgetKey = keyof typeof BUDGET_KINDS;
/** The kinds a cap over a day or a week may limit (`spend: true`). */
export type PeriodKey = { [K in BudgetKey]: (typeof BUDGET_KINDS)[K]["spend"] extends true ? K : never }[BudgetKey];

/** Every key, in the table's order. */
export const BUDGET_KEYS = Object.keys(BUDGET_KINDS) as BudgetKey[];
/** The keys a cap over time may set, in the table's order. */
export const PERIOD_KEYS = BUDGET_KEYS.filter((k): k is PeriodKey => BUDGET_KINDS[k].spend);

export function kindOf(key: BudgetKey): KindSpec {
  return BUDGET_KINDS[key];
}

export function isBudgetKey(key: unknown): key is BudgetKey {
  return typeof key === "string" && Object.hasOwn(BUDGET_KINDS, key);
}

/** The keys measured in `unit` (the durations: `activeTime`), for the places that print a path's value by its unit. */
export function keysOfUnit(unit: BudgetUnit): BudgetKey[] {
  return BUDGET_KEYS.filter((k) => BUDGET_KINDS[k].unit === unit);
}

/** Each key's unit, as data for the dashboard's browser script (it formats a figure by its unit, not by its key). */
export function unitsByKey(): Record<BudgetKey, BudgetUnit> {
  return Object.fromEntries(BUDGET_KEYS.map((k) => [k, BUDGET_KINDS[k].unit])) as Record<BudgetKey, BudgetUnit>;
}
