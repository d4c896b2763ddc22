import { addDays, addHours } from "date-fns";
import { describe, expect, it } from "vitest";
import { type ResumeClass, classifyResume } from "../../../governance/session/resume-window.ts";
import { HOUR, T0, inEachTimeZone } from "../fixtures/records.ts";

const MIN = 1 * HOUR;
const MAX = 48 * HOUR;
const classify = (idle: number, interrupted = false, lastActivityAt = T0) =>
  classifyResume({ lastActivityAt, now: lastActivityAt + idle, interrupted, minIdleMs: MIN, maxIdleMs: MAX });

const table: Array<[string, number, boolean, ResumeClass]> = [
  ["no gap", 0, false, "continue"],
  ["1 h − 1 ms", MIN - 1, false, "continue"],
  ["exactly 1 h", MIN, false, "resume"],
  ["1 h + 1 ms", MIN + 1, false, "resume"],
  ["48 h − 1 ms", MAX - 1, false, "resume"],
  ["exactly 48 h", MAX, false, "expired"],
  ["48 h + 1 ms", MAX + 1, false, "expired"],
  ["interrupted, no gap", 0, true, "resume"],
  ["interrupted, 1 h − 1 ms", MIN - 1, true, "resume"],
  ["interrupted, 48 h − 1 ms", MAX - 1, true, "resume"],
  ["interrupted, exactly 48 h", MAX, true, "expired"],
  ["clock skew (now before last activity)", -5 * HOUR, false, "continue"],
  ["clock skew, interrupted", -5 * HOUR, true, "resume"],
];

describe("classifyResume boundaries (pure epoch arithmetic: the process time zone cannot matter)", () => {
  it.each(table)("%s → %s", (_name, idle, interrupted, expected) => {
    expect(classify(idle, interrupted)).toBe(expected);
  });
});

describe("classifyResume across a DST change (America/Los_Angeles, spring forward 2025-03-09)", () => {
  inEachTimeZone("48 h means 48 elapsed hours, not two calendar days", (tz) => {
    it("two calendar days later at the same wall-clock time is 47 h in LA (still a resume), 48 h in UTC", () => {
      // Saturday 2025-03-08 12:00 local; built in the zone under test.
      const start = new Date(2025, 2, 8, 12, 0, 0).getTime();
      const twoCalendarDays = addDays(start, 2).getTime();
      const elapsed = twoCalendarDays - start;
      expect(elapsed).toBe(tz === "UTC" ? 48 * HOUR : 47 * HOUR);
      expect(classify(elapsed, false, start)).toBe(tz === "UTC" ? "expired" : "resume");
    });
    it("48 elapsed hours is expired in every zone, 1 ms less is not", () => {
      const start = new Date(2025, 2, 8, 12, 0, 0).getTime();
      const fortyEight = addHours(start, 48).getTime();
      expect(classifyResume({ lastActivityAt: start, now: fortyEight, interrupted: false, minIdleMs: MIN, maxIdleMs: MAX })).toBe("expired");
      expect(classifyResume({ lastActivityAt: start, now: fortyEight - 1, interrupted: false, minIdleMs: MIN, maxIdleMs: MAX })).toBe("resume");
    });
  });
});
