/**
 * Progress or noise in the numbers of a tool's output (docs/budgets.md, "Loop guards").
 *
 * An output is read as a shape (its text with every number, timestamp and id masked) and the readings of its numbers
 * and timestamps, position by position ("slots"). Two results of the same call with the same shape differ only in
 * their readings; this file decides whether that difference is progress. Per slot it keeps a small trend (the last
 * value, the direction it moves in, whether every move was +1, how often it turned) and judges one step:
 *
 * - progress: the slot moved in its direction — a byte count or a percentage that grows, a clock that advances, a
 *   count of files left that falls (a countdown ends, so a falling number cannot run forever);
 * - noise: a slot that turned back twice (a duration, a random number: they jump up and down); one turn is a restart
 *   (a log rotated, a clock past midnight, a retry from 0 %) and the slot goes on in its direction;
 * - a call counter: an integer below 10⁹ that went up by exactly one at every call so far ("attempt 3: not ready") —
 *   it counts the calls themselves, not work, so it is not progress (epoch seconds are above 10⁹: a clock);
 * - unchanged: not progress.
 * The first move of a slot counts as progress (benefit of the doubt: a growing number inside an A-B cycle must not
 * read as a repeat at its first step), and so does the move after a restart, so random numbers are caught a few calls
 * later than identical results (docs/budgets.md gives figures), never not at all. Values are compared as exact
 * decimal strings: `date +%s%N` has 19 digits, more than a double holds.
 */

/** A number or timestamp of an output: its value as a decimal string without leading zeros ("0" for zero). */
export type Reading = { time: boolean; value: string };

/** What is kept per slot between two results of the same call. */
export type SlotTrend = {
  value: string;
  time: boolean;
  /** 1 growing, -1 falling, 0 not moved yet. */
  dir: -1 | 0 | 1;
  /** Every step so far was exactly +1 (a call counter). */
  unit: boolean;
  /** Times the slot moved against its direction; at {@link NOISE_TURNS} it is noise. */
  turns: number;
};

/** The numbers of one output that are watched: the last ones (where a log's tail, a count or a clock stands). */
export const MAX_SLOTS = 16;
/** A run of digits longer than this is an id or data, not a measure (masked as an id, never a slot). */
const MAX_DIGITS = 32;
const NOISE_TURNS = 2;
const COUNTER_BELOW_DIGITS = 9;

const ISO_TIME = String.raw`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?`;
const CLOCK = String.raw`\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b`;
const UUID = String.raw`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`;
const HEX_ID = String.raw`\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b`;
const NUMBER = String.raw`\d+(?:\.\d+)?`;
/** One pass over the output; the alternatives in this order (a timestamp before its digits, an id before a number). */
const TOKEN = new RegExp(`(${ISO_TIME})|(${CLOCK})|(${UUID}|${HEX_ID})|${NUMBER}`, "gi");
const ZONE = /(?:Z|[+-]\d{2}:?\d{2})$/i;

type Token = { kind: "iso" | "clock" | "number"; text: string };

/**
 * The output's shape and the readings of its last {@link MAX_SLOTS} numbers and timestamps. A timestamp is one
 * reading (its digits in order, so it compares as a point in time); its mask names how many parts it has, so a date
 * and a date with a time are not one slot. It runs on every tool result: one regex pass, and a token's value is worked
 * out only when it is among the last {@link MAX_SLOTS}.
 */
export function readOutput(text: string): { shape: string; readings: Reading[] } {
  const ring: Token[] = [];
  let count = 0;
  const shape = text.replace(TOKEN, (m: string, iso: string | undefined, clock: string | undefined, id: string | undefined) => {
    if (id !== undefined) return "<id>";
    // Only a plain number can be longer than MAX_DIGITS (a timestamp has at most 14 digits before its fraction).
    if (iso === undefined && clock === undefined && m.length > MAX_DIGITS && (m.split(".")[0] as string).length > MAX_DIGITS) return "<id>";
    ring[count++ % MAX_SLOTS] = { kind: iso !== undefined ? "iso" : clock !== undefined ? "clock" : "number", text: m };
    if (iso !== undefined) return m.length > 10 && /[T ]/i.test(m.charAt(10)) ? (m.charAt(16) === ":" ? "<time6>" : "<time5>") : "<time3>";
    if (clock !== undefined) return m.indexOf(":", m.indexOf(":") + 1) > 0 ? "<time3>" : "<time2>";
    return "#";
  });
  const readings: Reading[] = [];
  for (let i = Math.max(0, count - MAX_SLOTS); i < count; i++) readings.push(reading(ring[i % MAX_SLOTS] as Token));
  return { shape, readings };
}

function reading({ kind, text }: Token): Reading {
  if (kind === "number") {
    const dot = text.indexOf(".");
    return { time: false, value: dot < 0 ? decimal(text, "") : decimal(text.slice(0, dot), text.slice(dot + 1)) };
  }
  const [whole = "", fraction = ""] = text.replace(ZONE, "").split(/[.,](?=\d+$)/);
  return { time: true, value: decimal(whole.replace(/\D/g, ""), fraction) };
}

function decimal(whole: string, fraction: string): string {
  const w = whole.replace(/^0+/, "") || "0";
  const f = fraction.replace(/0+$/, "");
  return f ? `${w}.${f}` : w;
}

/** -1, 0 or 1 as decimal a is below, equal to or above b; exact at any length. */
export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  const [aw = "", af = ""] = a.split(".");
  const [bw = "", bf = ""] = b.split(".");
  if (aw.length !== bw.length) return aw.length < bw.length ? -1 : 1;
  if (aw !== bw) return aw < bw ? -1 : 1;
  const n = Math.max(af.length, bf.length);
  const x = af.padEnd(n, "0");
  const y = bf.padEnd(n, "0");
  return x === y ? 0 : x < y ? -1 : 1;
}

function plusOne(before: string, after: string): boolean {
  if (before.includes(".") || after.includes(".") || after.length > COUNTER_BELOW_DIGITS) return false;
  return Number(after) - Number(before) === 1;
}

/**
 * One result's readings against the trends of the previous result of the same call and shape (none: the first
 * one). `progress` when at least one slot moved in its direction and is not a call counter.
 */
export function stepTrends(previous: readonly SlotTrend[] | undefined, readings: readonly Reading[]): { trends: SlotTrend[]; progress: boolean } {
  if (!previous || previous.length !== readings.length) {
    return { trends: readings.map((r) => ({ value: r.value, time: r.time, dir: 0, unit: true, turns: 0 })), progress: false };
  }
  let progress = false;
  const trends = readings.map((r, i): SlotTrend => {
    const t = previous[i] as SlotTrend;
    const c = compareDecimal(r.value, t.value);
    if (c === 0) return { ...t, unit: false };
    if (t.dir !== 0 && c !== t.dir) return { ...t, value: r.value, turns: t.turns + 1 };
    const unit = t.unit && c === 1 && !r.time && plusOne(t.value, r.value);
    if (t.turns < NOISE_TURNS && !unit) progress = true;
    return { value: r.value, time: r.time, dir: c, unit, turns: t.turns };
  });
  return { trends, progress };
}
