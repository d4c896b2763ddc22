import type { GovernanceConfig } from "../config/config.ts";
import { PERIOD_KEYS, type PeriodKey, type PeriodLimits } from "../config/budget-config.ts";
import { audit, type Effect } from "../session/effects.ts";
import type { SessionRecord } from "../session/session-record.ts";
import { BUDGET_STOP_PREFIX } from "../session/stop-origin.ts";
import { type SpendWindow, weekOfDay } from "../time/spend-window.ts";
import { formatUse } from "./budget-notices.ts";
import { buildCapSpawnRefusal, type CapLine, type CapName, capLabel, capStopReason } from "./spend-notices.ts";
import { standDown } from "./budget-check.ts";
import { roundAmount, totalTokens, type UseDelta } from "./budget-usage.ts";

/**
 * Budgets over time (issue 44): caps on what a project, or the user across projects, spends in a day or a week. The
 * figures are the sums of the spend ledger (governance/storage/spend-ledger.ts), which every OpenCode process appends
 * OpenCode's own figures to; the rules here are pure — what a use adds, which limits apply in a window (raises
 * included), when a cap is warned, spent or back under, and whom a spent cap stops. plugin/budget/spend-guard.ts feeds
 * them and runs what they return.
 */
export type { CapLine, CapName };
export const CAP_NAMES: readonly CapName[] = ["project.daily", "project.weekly", "user.daily", "user.weekly"];
export type SpendUse = Record<PeriodKey, number>;

export const NO_SPEND: SpendUse = Object.fromEntries(PERIOD_KEYS.map((k) => [k, 0])) as SpendUse;

/**
 * How each spend kind (budget-kinds.ts `spend: true`) is counted from a use delta (what the tree counts: model
 * requests, tokens by kind, cost): the compiler refuses a spend kind without its entry, which the ledger would
 * otherwise never count. Tool calls and active time are not spend.
 */
const SPENT: Record<PeriodKey, (d: UseDelta) => number> = {
  modelRequests: (d) => d.modelRequests ?? 0,
  tokens: (d) => (d.tokens ? totalTokens(d.tokens) : 0),
  inputTokens: (d) => d.tokens?.input ?? 0,
  outputTokens: (d) => d.tokens?.output ?? 0,
  reasoningTokens: (d) => d.tokens?.reasoning ?? 0,
  cacheReadTokens: (d) => d.tokens?.cacheRead ?? 0,
  cacheWriteTokens: (d) => d.tokens?.cacheWrite ?? 0,
  cost: (d) => d.cost ?? 0,
};

/** The ledger amounts of a use delta: every spend kind that grew. */
export function spendOf(delta: UseDelta): Partial<SpendUse> {
  const out: Partial<SpendUse> = {};
  for (const key of PERIOD_KEYS) {
    const grew = SPENT[key](delta);
    if (grew) out[key] = grew;
  }
  return out;
}

/** A ledger sum as use (names the ledger holds that are no key are ignored; a missing key is 0), rounded. */
export function spendUse(amounts: Readonly<Record<string, number>>): SpendUse {
  return Object.fromEntries(PERIOD_KEYS.map((k) => [k, roundAmount(amounts[k] ?? 0)])) as SpendUse;
}

/** A raise kept in the ledger: the period it raises, what it adds, and the day it was made (the window it belongs to). */
export type CapRaise = { period: "daily" | "weekly"; add: Readonly<Record<string, number>>; day: string };

/** Days of the ledger a window's sums need: the week's days up to today (the day's sum is today's file only). */
export function windowDays(window: SpendWindow): string[] {
  const today = new Date(`${window.day}T12:00:00Z`);
  const days: string[] = [];
  for (let i = 0; i < 7; i++) {
    const day = new Date(today.getTime() - i * 86_400_000).toISOString().slice(0, 10);
    if (weekOfDay(day) !== window.week) break;
    days.push(day);
  }
  return days;
}

/**
 * The limits of one cap in a window: the configured cap plus the raises made for it — a daily raise counts on the day
 * it was made, a weekly one in that day's week. A raise of a key without a cap adds nothing (there is none to raise).
 */
export function capLimits(config: Pick<GovernanceConfig, "budgets">, cap: CapName, window: SpendWindow, raises: readonly CapRaise[]): PeriodLimits {
  const [scope, period] = cap.split(".") as ["project" | "user", "daily" | "weekly"];
  const out: Record<string, number> = { ...config.budgets[scope][period] };
  for (const r of raises) {
    if (r.period !== period) continue;
    if (period === "daily" ? r.day !== window.day : weekOfDay(r.day) !== window.week) continue;
    for (const key of PERIOD_KEYS) {
      const add = r.add[key];
      if (add !== undefined && add > 0 && out[key] !== undefined) out[key] = roundAmount(out[key] + add);
    }
  }
  return out as PeriodLimits;
}

/** One scope's ledger sums for a window: today's use, the week's use (today included), the raises of the week. */
export type ScopeSums = { today: Readonly<Record<string, number>>; week: Readonly<Record<string, number>>; raises: readonly CapRaise[] };

/** The four caps' inputs of a window (use and raised limits), from both ledgers' sums: what the check and every view read. */
export function capInputs(config: Pick<GovernanceConfig, "budgets">, window: SpendWindow, sums: Readonly<Record<"project" | "user", ScopeSums>>): CapInput[] {
  return CAP_NAMES.map((cap) => {
    const [scope, period] = cap.split(".") as ["project" | "user", "daily" | "weekly"];
    const s = sums[scope];
    return {
      cap,
      window: period === "daily" ? window.day : window.week,
      use: spendUse(period === "daily" ? s.today : s.week),
      limits: capLimits(config, cap, window, s.raises),
    };
  });
}

/** What this process has said about a cap in one window: the keys warned, the key that ran out. */
export type CapMark = { window: string; warned: PeriodKey[]; exceeded: CapLine | null };
export type CapMarks = Partial<Record<CapName, CapMark>>;
export type CapInput = { cap: CapName; window: string; use: SpendUse; limits: PeriodLimits };

export type CapCheck = {
  marks: CapMarks;
  /** Caps that passed `warnAt` with this check (each key once per window): the acting session is told. */
  warnings: CapLine[];
  /** Caps spent with this check: audited, a toast. */
  exceeded: CapLine[];
  /** Every cap spent now (this check or before): its subagents are stopped, a root is told. */
  spent: CapLine[];
  /** Caps back under with this check (a raise, a new window's use): the stops they started may stand down. */
  resumed: Array<{ cap: CapName; window: string }>;
  effects: Effect[];
};

/**
 * One look at the caps. A cap's mark belongs to its window (a new day or week starts clean). At `warnAt` × limit a key
 * is warned once; at its limit the cap is spent, once, the first key over naming it; a raise (or a key's use no longer
 * over) brings it back under and is said (`budget_resumed`). Unchanged marks come back as the same object.
 */
export function checkCaps(marks: CapMarks, inputs: readonly CapInput[], warnAt: number): CapCheck {
  const out: CapCheck = { marks, warnings: [], exceeded: [], spent: [], resumed: [], effects: [] };
  for (const { cap, window, use, limits } of inputs) {
    const before = marks[cap];
    const mark: CapMark = before && before.window === window ? before : { window, warned: [], exceeded: null };
    let over: CapLine | null = null;
    const warned: PeriodKey[] = [];
    const fresh: CapLine[] = [];
    for (const key of PERIOD_KEYS) {
      const limit = limits[key];
      if (limit === undefined) continue;
      const used = use[key];
      if (used >= limit && !over) over = { cap, key, used, limit };
      if (used >= warnAt * limit) {
        warned.push(key);
        if (!mark.warned.includes(key) && used < limit) fresh.push({ cap, key, used, limit });
      }
    }
    let exceeded = mark.exceeded;
    if (over && !exceeded) {
      exceeded = over;
      out.exceeded.push(over);
      out.effects.push(audit("budget_exceeded", { scope: cap, key: over.key, used: over.used, limit: over.limit, window }), {
        type: "toast",
        message: `Budget exceeded (${capLabel(cap)}): ${formatUse(over.key, over.used, over.limit)}. Governance is stopping the running subagents.`,
        variant: "warning",
      });
    } else if (!over && exceeded) {
      exceeded = null;
      out.resumed.push({ cap, window });
      out.effects.push(audit("budget_resumed", { scope: cap, window }));
    }
    if (!exceeded) {
      out.warnings.push(...fresh);
      for (const w of fresh) out.effects.push(audit("budget_warning", { scope: cap, key: w.key, used: w.used, limit: w.limit, window }));
    }
    if (exceeded) out.spent.push({ ...exceeded, used: use[exceeded.key] });
    const same = before === mark && mark.exceeded === exceeded && sameKeys(mark.warned, warned);
    if (!same) out.marks = { ...out.marks, [cap]: { window, warned, exceeded } };
  }
  return out;
}

const sameKeys = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

/** The stop a spent cap asks of a subagent: one id per cap and window, so a session is asked once. */
export function capStop(line: CapLine, window: string): { id: string; reason: string } {
  return { id: `${BUDGET_STOP_PREFIX}${line.cap}-${window}`, reason: capStopReason(line) };
}

/** Whom a spent cap stops: every subagent of this process still at work (root sessions are told, not stopped). */
export function capStopTargets(hosted: readonly SessionRecord[]): string[] {
  return hosted.filter((r) => r.parentId !== null && r.control === "active").map((r) => r.sessionId);
}

/** The first day after a cap's window: tomorrow for a daily cap, the next Monday for a weekly one (`YYYY-MM-DD`). */
export function capResetDay(cap: CapName, window: SpendWindow): string {
  const next = (day: string) => new Date(Date.parse(`${day}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  let day = next(window.day);
  if (cap.endsWith("weekly")) while (weekOfDay(day) === window.week) day = next(day);
  return day;
}

export type CapSpawnDecision = { ok: true } | { ok: false; message: string; effects: Effect[] };

/**
 * May a subagent start while caps are spent (the spawn gate, beside the depth and concurrency refusals)? Not while
 * any cap is spent: it would only be stopped at its first step, its prompt already paid for. The refusal names the
 * first spent cap, its use, when it resets and how the user raises it.
 */
export function decideCapSpawn(input: { spent: readonly CapLine[]; window: SpendWindow; timeZone: string; targetAgent: string }): CapSpawnDecision {
  const line = input.spent[0];
  if (!line) return { ok: true };
  const window = line.cap.endsWith("daily") ? input.window.day : input.window.week;
  const resetsOn = capResetDay(line.cap, input.window);
  return {
    ok: false,
    message: buildCapSpawnRefusal({ line, resetsOn, timeZone: input.timeZone, targetAgent: input.targetAgent }),
    effects: [
      audit("spawn_refused_budget", { scope: line.cap, key: line.key, used: line.used, limit: line.limit, window, targetAgent: input.targetAgent }),
      { type: "toast", message: `Spawn refused: ${capLabel(line.cap)} is spent (${formatUse(line.key, line.used, line.limit)}).`, variant: "warning" },
    ],
  };
}

/**
 * Whom a cap back under stands down (as a tree raise does: budget-step.ts `treeStandDowns`): the sessions whose stop
 * that cap started in that window (the stop's id names both), and only while no cap is spent — a session another
 * spent cap would stop again is left stopped. A user's stop, a tree's or another window's is never touched.
 */
export function capStandDowns(check: Pick<CapCheck, "resumed" | "spent">, hosted: readonly SessionRecord[]): string[] {
  if (check.spent.length > 0 || check.resumed.length === 0) return [];
  const ids = new Set(check.resumed.map((r) => `${BUDGET_STOP_PREFIX}${r.cap}-${r.window}`));
  return hosted.filter((r) => r.stop !== null && ids.has(r.stop.requestId)).map((r) => r.sessionId);
}

/** One session's stand-down for a cap back under: control back to active, told once on its next tool result. */
export function capStandDownStep(r: SessionRecord | undefined): { next: SessionRecord | undefined; effects: Effect[] } {
  return { next: r ? standDown(r, "session").next : r, effects: [] };
}
