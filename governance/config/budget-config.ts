import * as z from "../zod.ts";
import { parseDuration } from "../time/time-format.ts";
import { BUDGET_KEYS, type BudgetKey as Key, PERIOD_KEYS, type PeriodKey } from "./budget-kinds.ts";
import { amountSchema, limitSchema } from "./budget-units.ts";

/** A loop guard's wait: a duration between 100 ms and 1 h; milliseconds after parsing. */
export const LoopWait = (what: string) =>
  z.union([z.number(), z.string()]).transform((value, ctx) => {
    const parsed = parseDuration(value);
    if (!parsed.ok) {
      ctx.addIssue({ code: "custom", message: parsed.reason });
      return z.NEVER;
    }
    if (parsed.ms < 100 || parsed.ms > 3_600_000) {
      ctx.addIssue({ code: "custom", message: `${what} must be between 100ms and 1h` });
      return z.NEVER;
    }
    return parsed.ms;
  });

/** The budget keys, in the order they are shown: the kinds table's. */
export const BudgetKey = z.enum(BUDGET_KEYS as [Key, ...Key[]]);
export type BudgetKey = Key;
export type { PeriodKey };

type Shape = { [K in BudgetKey]: ReturnType<z.ZodType<number>["optional"]> };
const shape = (schema: (key: BudgetKey) => z.ZodType<number>): Shape => Object.fromEntries(BUDGET_KEYS.map((k) => [k, schema(k).optional()])) as Shape;

/**
 * What governance.yaml may limit (docs/budgets.md): one optional limit per kind of budget-kinds.ts, with the kind's
 * bounds. Every limit is optional: an absent key is no limit. The bounds refuse absurd values with a message (a
 * negative budget, a token budget in the quadrillions, a year of active time) rather than letting a typo switch a
 * guard off or make it fire at once.
 */
export const BudgetLimits = z.strictObject(shape(limitSchema));
export type BudgetLimits = z.infer<typeof BudgetLimits>;

/**
 * A cap over a day or a week (issue 44): what OpenCode itself reports — cost, tokens by kind, model requests — summed
 * over every session and every OpenCode process of a project (`budgets.project`) or of the user (`budgets.user`).
 * Tool calls and active time are a session's matter, not a spend, and are not keys here.
 */
export const PeriodLimits = BudgetLimits.pick(Object.fromEntries(PERIOD_KEYS.map((k) => [k, true])) as Record<PeriodKey, true>);
export type PeriodLimits = z.infer<typeof PeriodLimits>;

/** The keys a period cap may set (the kinds marked `spend`), in the order they are shown. */
export { PERIOD_KEYS } from "./budget-kinds.ts";

/** Daily and weekly caps of one scope; days and weeks in the user's time zone (ISO weeks, Monday first). */
export const PeriodCaps = z.strictObject({
  daily: PeriodLimits.prefault({}),
  weekly: PeriodLimits.prefault({}),
});
export type PeriodCaps = z.infer<typeof PeriodCaps>;

/** Generous runaway guards for every subagent without its own entry: a loop hits them, real work rarely does. */
export const DEFAULT_SUBAGENT_BUDGET = { modelRequests: 500, toolCalls: 1000, activeTime: "2h" } as const;

export const BudgetConfig = z.strictObject({
  /** Share of a budget at which the session is told what is left (once per budget). */
  warnAt: z.number().min(0.1, "warnAt must be between 0.1 and 0.99").max(0.99, "warnAt must be between 0.1 and 0.99").default(0.8),
  /** Limits of every subagent whose agent has no entry in `agents` (root sessions are not limited by it). */
  default: BudgetLimits.prefault(DEFAULT_SUBAGENT_BUDGET),
  /** Limits by OpenCode agent name; they replace `default` for that agent, root sessions included. */
  agents: z.record(z.string().min(1).max(100), BudgetLimits).default(() => ({})),
  /** Limits of a whole task tree: a root session and all its descendants together. */
  tree: BudgetLimits.prefault({}),
  /** Spend of the whole project (every session, every OpenCode process in it) per day and per week. */
  project: PeriodCaps.prefault({}),
  /** Spend of the user across every project per day and per week (a project may only tighten it). */
  user: PeriodCaps.prefault({}),
});
export type BudgetConfig = z.infer<typeof BudgetConfig>;

export const ConcurrencyConfig = z.strictObject({
  /** Running subagents one session may have at once (background ones included). */
  perParent: z.number().int().min(1, "perParent must be 1 or more").max(100, "perParent must be 100 or less").default(4),
  /** Running subagents in the whole project at once. */
  perProject: z.number().int().min(1, "perProject must be 1 or more").max(1000, "perProject must be 1000 or less").default(10),
});
export type ConcurrencyConfig = z.infer<typeof ConcurrencyConfig>;

export const LoopConfig = z.strictObject({
  enabled: z.boolean().default(true),
  /** The same call with the same result this many times in a row is a loop (OpenCode's doom_loop uses 3). */
  repeat: z.number().int().min(2, "repeat must be 2 or more").max(50, "repeat must be 50 or less").default(3),
  /** A short cycle of 2–4 different calls (A-B, A-B-C, …): this many full cycles with unchanged results is a loop. */
  pingPong: z.number().int().min(2, "pingPong must be 2 or more").max(25, "pingPong must be 25 or less").default(2),
  /** A poll that waits (sleeps, asks for a status, takes pollWait, comes pollGap after the last result): unchanged this many times is a loop. */
  pollRepeat: z.number().int().min(3, "pollRepeat must be 3 or more").max(100, "pollRepeat must be 100 or less").default(10),
  /** A call that itself took this long waited (a poll, not a model repeating itself). */
  pollWait: LoopWait("pollWait").prefault("2s"),
  /** A call this long after the previous result waited (longer than a model's step takes). */
  pollGap: LoopWait("pollGap").prefault("30s"),
  /** Looping calls allowed after the notice before the stop ladder starts. */
  stopAfter: z.number().int().min(1, "stopAfter must be 1 or more").max(50, "stopAfter must be 50 or less").default(2),
});
export type LoopConfig = z.infer<typeof LoopConfig>;

/**
 * An amount a user adds to a running budget (`opencode-governance budget <session> --add …`): the same keys, plain
 * numbers (activeTime in milliseconds), the same bounds. Stored in signed queue files and records, so it carries no
 * transform: what was signed is what is read back.
 */
export const BudgetAmounts = z.strictObject(shape(amountSchema));
export type BudgetAmounts = z.infer<typeof BudgetAmounts>;
