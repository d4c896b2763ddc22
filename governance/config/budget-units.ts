import * as z from "../zod.ts";
import { parseDuration } from "../time/time-format.ts";
import { BUDGET_KINDS, type BudgetKey, type BudgetUnit, type KindSpec } from "./budget-kinds.ts";

/**
 * What a budget unit means (budget-kinds.ts): how a limit and a raise of it are parsed and bounded, and how its
 * amounts are written for people. Every place that used to ask "is this key `activeTime`? `cost`?" asks the key's
 * unit here, so a new kind of an existing unit is one row of the kinds table.
 */
type UnitSpec = {
  /** A limit in governance.yaml: a duration may be written `2h`; every unit ends as a number. */
  limit: (key: string, kind: KindSpec) => z.ZodType<number>;
  /** A raise (`budget --add`): plain numbers, stored signed, so no transform. */
  amount: (key: string, kind: KindSpec) => z.ZodType<number>;
  /** One `--add key=value` value as typed on the command line. */
  parse: (value: string) => { ok: true; n: number } | { ok: false; reason: string };
  /** In a sentence (notices, stop reasons, cap lines): `24m`, `$1.62`, `8`; dollars with the limit's precision. */
  say: (value: number, setWith: number) => string;
  /** In a compact one-line view (`sessions`, `status`, the audit detail): `12m`, `$0.12`, `1.5k`. */
  short: (value: number, setWith?: number) => string;
};

const count = (what: string, max: number) =>
  z
    .number()
    .int(`${what} must be a whole number`)
    .min(1, `${what} must be 1 or more (leave the key out for no limit)`)
    .max(max, `${what} above ${max.toLocaleString("en-US")} is not a limit; leave the key out for none`);

/** `1s`, `7d`: a duration bound as the config's error messages state it. */
function bound(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function number(value: string): { ok: true; n: number } | { ok: false; reason: string } {
  const n = Number(value);
  return Number.isFinite(n) ? { ok: true, n } : { ok: false, reason: `not a number: ${JSON.stringify(value)}` };
}

/** Decimal places a number was written with (0.001 → 3, 2 → 0, 1e-7 → 7); float noise is not a place (0.4 + 0.2 → 1). */
function decimalsOf(n: number): number {
  const text = String(Number(n.toPrecision(12)));
  const exp = /e-(\d+)$/.exec(text);
  if (exp) return Number(exp[1]) + (text.split("e")[0]?.split(".")[1]?.length ?? 0);
  return text.split(".")[1]?.length ?? 0;
}

/**
 * Dollars with the precision the budget was set with, never fewer than cents: a $0.001 limit prints as $0.001 (not
 * $0.00) and its use as $0.000 or $0.001; at most 6 places. `setWith` is the configured limit.
 */
export function formatDollars(amount: number, setWith: number): string {
  const places = Math.min(6, Math.max(2, decimalsOf(setWith)));
  return `$${amount.toFixed(places)}`;
}

/** A duration in a sentence: `45s`, `24m`, `1h5m`. */
function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.round(ms / 60_000);
  return m < 60 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60 ? `${m % 60}m` : ""}`;
}

const UNITS: Record<BudgetUnit, UnitSpec> = {
  count: {
    limit: (key, kind) => count(key, kind.max),
    amount: (key, kind) => count(key, kind.max),
    parse: number,
    say: (value) => String(Math.round(value)),
    short: (value) => {
      const n = Math.round(value);
      return n < 10_000 ? String(n) : n < 1e6 ? `${Math.round(n / 100) / 10}k` : `${Math.round(n / 1e5) / 10}M`;
    },
  },
  ms: {
    limit: (key, kind) =>
      z.union([z.number(), z.string()]).transform((value, ctx) => {
        const parsed = parseDuration(value);
        if (!parsed.ok) {
          ctx.addIssue({ code: "custom", message: parsed.reason });
          return z.NEVER;
        }
        if (parsed.ms < (kind.min ?? 0) || parsed.ms > kind.max) {
          ctx.addIssue({ code: "custom", message: `${key} must be between ${bound(kind.min ?? 0)} and ${bound(kind.max)}` });
          return z.NEVER;
        }
        return parsed.ms;
      }),
    amount: (key, kind) =>
      z
        .number()
        .int()
        .min(kind.min ?? 0, `${key} must be at least ${bound(kind.min ?? 0)}`)
        .max(kind.max, `${key} must be at most ${bound(kind.max)}`),
    parse: (value) => {
      const d = parseDuration(value);
      return d.ok ? { ok: true, n: d.ms } : d;
    },
    say: (value) => minutes(value),
    short: (value) => {
      const s = Math.round(value / 1000);
      return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round((s / 3600) * 10) / 10}h`;
    },
  },
  usd: {
    limit: (key, kind) =>
      z
        .number()
        .positive(`${key} must be more than 0 (US dollars; leave the key out for no limit)`)
        .max(kind.max, `${key} above ${kind.max} USD is not a limit; leave the key out for none`),
    amount: (key, kind) => z.number().positive(`${key} must be more than 0`).max(kind.max, `${key} must be at most ${kind.max}`),
    parse: number,
    say: (value, setWith) => formatDollars(value, setWith),
    short: (value, setWith) => formatDollars(value, setWith ?? 1),
  },
};

export function unitOf(key: BudgetKey): UnitSpec {
  return UNITS[BUDGET_KINDS[key].unit];
}

/** The schema of a limit of `key` in governance.yaml (bounds and messages from its kind). */
export function limitSchema(key: BudgetKey): z.ZodType<number> {
  return unitOf(key).limit(key, BUDGET_KINDS[key]);
}

/** The schema of an amount added to `key` by a raise. */
export function amountSchema(key: BudgetKey): z.ZodType<number> {
  return unitOf(key).amount(key, BUDGET_KINDS[key]);
}

/** `--add key=value`'s value: a duration for a duration kind (`10m`), a number otherwise. */
export function parseAmount(key: BudgetKey, value: string): { ok: true; n: number } | { ok: false; reason: string } {
  const parsed = unitOf(key).parse(value);
  return parsed.ok ? parsed : { ok: false, reason: `${key}: ${parsed.reason}` };
}

/** An amount in a sentence: "24m", "$1.62", "8"; dollars with the precision the limit (`setWith`) was set with. */
export function sayAmount(key: BudgetKey, value: number, setWith: number): string {
  return unitOf(key).say(value, setWith);
}

/** An amount as people read it in one line: `$0.12`, `12m`, `1.5k`, `8`; dollars with the limit's precision (`setWith`). */
export function formatAmount(key: BudgetKey, value: number, setWith?: number): string {
  return unitOf(key).short(value, setWith);
}

/** A duration in the compact form `formatAmount` gives a duration kind (`6s`, `12m`, `2.5h`). */
export function formatDurationShort(ms: number): string {
  return UNITS.ms.short(ms);
}
