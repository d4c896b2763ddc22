import { getISOWeek } from "date-fns/getISOWeek";
import { getISOWeekYear } from "date-fns/getISOWeekYear";

/**
 * The day and the week a moment falls in, in a time zone (budgets over time, issue 44): a day is the calendar day of
 * that zone (`2026-11-28`), a week its ISO week (`2026-W48`, Monday to Sunday). Pure: the moment and the zone in,
 * names out, so the boundary is tested in any zone without moving the machine's clock.
 */
export type SpendWindow = { day: string; week: string };

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The machine's time zone (the `TZ` environment variable when set): the user's, as their clock shows it. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** `2026-11-28` for the calendar day of `at` (epoch ms) in `timeZone`. */
export function dayOf(at: number, timeZone: string): string {
  const parts = formatter(timeZone).formatToParts(new Date(at));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The ISO week a calendar day belongs to (`2026-11-28` → `2026-W48`; `2027-01-01` → `2026-W53`); null for no day. */
export function weekOfDay(day: string): string | null {
  const m = DAY.exec(day);
  if (!m) return null;
  // A calendar day has no zone; date-fns reads a Date's local fields, so the day is built from its own fields in the
  // machine's zone and read back the same way (noon: clear of any daylight-saving jump).
  const date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 12);
  if (date.getMonth() !== Number(m[2]) - 1) return null;
  return `${getISOWeekYear(date)}-W${String(getISOWeek(date)).padStart(2, "0")}`;
}

/** The day and week of `at` in `timeZone`. */
export function spendWindow(at: number, timeZone: string): SpendWindow {
  const day = dayOf(at, timeZone);
  return { day, week: weekOfDay(day) as string };
}
