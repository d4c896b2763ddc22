// The subpath, not the package index: the index loads all of date-fns (~300 ms at every CLI start on this machine).
import { formatDuration } from "date-fns/formatDuration";

/**
 * The one module that turns epoch milliseconds into text and duration text into milliseconds.
 *
 * Invariants: every function is pure (no `Date.now()`); ISO output is always UTC and therefore independent of the
 * process time zone; readable output uses the `timeZone` given (an IANA name) or, when absent, the process zone.
 * Idle durations are computed arithmetically (not with calendar arithmetic) so "2 hours 5 minutes" never depends on
 * the zone or a daylight-saving change in between.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: DAY };

export type DurationParse = { ok: true; ms: number } | { ok: false; reason: string };

/**
 * Parses a config duration: a non-negative number of milliseconds, or text made of `<number><unit>` parts with unit
 * ms, s, m, h or d (`"90s"`, `"10m"`, `"1h30m"`, `"48h"`, `"2d"`). A bare numeric string is milliseconds.
 */
export function parseDuration(value: string | number): DurationParse {
  const reason = `expected a duration like "90s", "10m", "1h", "48h", "2d" or milliseconds, got ${JSON.stringify(value)}`;
  if (typeof value === "number") {
    return Number.isFinite(value) && value >= 0 ? { ok: true, ms: Math.round(value) } : { ok: false, reason };
  }
  const text = value.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(text)) return { ok: true, ms: Math.round(Number(text)) };
  if (!/^(\d+(\.\d+)?\s*(ms|s|m|h|d)\s*)+$/.test(text)) return { ok: false, reason };
  let ms = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/g)) {
    ms += Number(part[1]) * (UNIT_MS[part[2] ?? ""] ?? Number.NaN);
  }
  return Number.isFinite(ms) ? { ok: true, ms: Math.round(ms) } : { ok: false, reason };
}

/**
 * Human idle duration with the two largest non-zero units: "2 hours 5 minutes", "1 day 3 hours", "45 seconds".
 * Below one second (or negative, from clock skew) it reads "less than a second".
 */
export function formatIdle(ms: number): string {
  if (!Number.isFinite(ms) || ms < SECOND) return "less than a second";
  const days = Math.floor(ms / DAY);
  const hours = Math.floor((ms % DAY) / HOUR);
  const minutes = Math.floor((ms % HOUR) / MINUTE);
  const seconds = Math.floor((ms % MINUTE) / SECOND);
  const units = [
    ["days", days],
    ["hours", hours],
    ["minutes", minutes],
    ["seconds", seconds],
  ] as const;
  const first = units.findIndex(([, n]) => n > 0);
  const picked = units.slice(first, first + 2).filter(([, n]) => n > 0);
  return formatDuration(Object.fromEntries(picked), { delimiter: " " });
}

/** ISO 8601 in UTC, second precision: `2026-02-04T10:30:00Z`. Zone-independent by construction. */
export function formatIsoUtc(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function parts(epochMs: number, options: Intl.DateTimeFormatOptions, timeZone?: string): Record<string, string> {
  const formatter = new Intl.DateTimeFormat("en-US", { ...options, hourCycle: "h23", timeZone });
  const out: Record<string, string> = {};
  for (const p of formatter.formatToParts(epochMs)) out[p.type] = p.value;
  return out;
}

/**
 * Readable local date and time: `Wed 4 Feb 2026, 11:30 GMT+1`. `timeZone` is an IANA name; an unknown name falls
 * back to UTC instead of throwing, because a typo in a user's setting must not break a resume.
 */
export function formatReadable(epochMs: number, timeZone?: string): string {
  const zone = safeZone(timeZone);
  const p = parts(
    epochMs,
    { weekday: "short", day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" },
    zone,
  );
  return `${p.weekday} ${p.day} ${p.month} ${p.year}, ${p.hour}:${p.minute} ${p.timeZoneName}`;
}

/** Short time of day for list items: `11:30 GMT+1`. Same zone rules as {@link formatReadable}. */
export function formatTimeOfDay(epochMs: number, timeZone?: string): string {
  const p = parts(epochMs, { hour: "2-digit", minute: "2-digit", timeZoneName: "short" }, safeZone(timeZone));
  return `${p.hour}:${p.minute} ${p.timeZoneName}`;
}

/** Both forms at once, as resume context shows them: `2026-02-04T10:30:00Z (Wed 4 Feb 2026, 11:30 GMT+1)`. */
export function formatTimestamp(epochMs: number, timeZone?: string): string {
  return `${formatIsoUtc(epochMs)} (${formatReadable(epochMs, timeZone)})`;
}

function safeZone(timeZone: string | undefined): string | undefined {
  if (timeZone === undefined) return undefined;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return timeZone;
  } catch {
    return "UTC";
  }
}
