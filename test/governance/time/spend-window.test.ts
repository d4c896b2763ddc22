import { afterEach, describe, expect, it } from "vitest";
import { dayOf, spendWindow, weekOfDay } from "../../../governance/time/spend-window.ts";

const originalTz = process.env.TZ;
afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

describe("the day and week a moment falls in (budgets over time)", () => {
  const lateSaturdayUtc = Date.UTC(2026, 10, 28, 23, 30); // Saturday 28 November 2026, 23:30 UTC

  it("is the calendar day of the user's zone, not of UTC", () => {
    expect(dayOf(lateSaturdayUtc, "UTC")).toBe("2026-11-28");
    expect(dayOf(lateSaturdayUtc, "Europe/Berlin")).toBe("2026-11-29"); // 00:30 on Sunday there
    expect(dayOf(lateSaturdayUtc, "America/Los_Angeles")).toBe("2026-11-28");
    expect(dayOf(Date.UTC(2026, 10, 28, 10, 59), "Pacific/Kiritimati")).toBe("2026-11-29"); // UTC+14
  });

  it("turns at local midnight, to the minute", () => {
    const midnightBerlin = Date.UTC(2026, 10, 28, 23, 0); // 00:00 CET
    expect(dayOf(midnightBerlin - 1, "Europe/Berlin")).toBe("2026-11-28");
    expect(dayOf(midnightBerlin, "Europe/Berlin")).toBe("2026-11-29");
  });

  it("weeks are ISO weeks, Monday first, across a year's end", () => {
    expect(weekOfDay("2026-11-29")).toBe("2026-W48"); // Sunday
    expect(weekOfDay("2026-11-30")).toBe("2026-W49"); // Monday
    expect(weekOfDay("2027-01-01")).toBe("2026-W53");
    expect(weekOfDay("2027-01-04")).toBe("2027-W01");
    expect(weekOfDay("2026-02-30")).toBeNull();
    expect(weekOfDay("not a day")).toBeNull();
  });

  it("a week does not depend on the machine's own zone", () => {
    for (const tz of ["UTC", "Pacific/Kiritimati", "America/Anchorage", "Asia/Kolkata"]) {
      process.env.TZ = tz;
      expect(weekOfDay("2026-11-30")).toBe("2026-W49");
      expect(weekOfDay("2026-03-29")).toBe("2026-W13"); // a daylight-saving day in Europe
      expect(spendWindow(lateSaturdayUtc, "Europe/Berlin")).toEqual({ day: "2026-11-29", week: "2026-W48" });
    }
  });
});
