import { describe, expect, it } from "vitest";
import { formatIdle, formatIsoUtc, formatReadable, formatTimeOfDay, formatTimestamp, parseDuration } from "../../../governance/time/time-format.ts";
import { useProcessTimeZone } from "../fixtures/time-zone.ts";

const AT = Date.UTC(2026, 1, 4, 10, 30, 0); // Wed 4 Feb 2026 10:30:00 UTC

describe("parseDuration", () => {
  it.each([
    ["90s", 90_000],
    ["10m", 600_000],
    ["1h", 3_600_000],
    ["48h", 172_800_000],
    ["2d", 172_800_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    [" 5S ", 5_000],
    ["1500", 1_500],
    [0, 0],
    [5_000, 5_000],
  ] as const)("%j → %d ms", (input, ms) => {
    expect(parseDuration(input)).toEqual({ ok: true, ms });
  });

  it.each(["abc", "-5s", "5 minutes", "", "1y", "h"])("rejects %j with an example of the format", (input) => {
    const r = parseDuration(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('"90s"');
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])("rejects the number %d", (input) => {
    expect(parseDuration(input).ok).toBe(false);
  });
});

describe("formatIdle", () => {
  it.each([
    [2 * 3_600_000 + 5 * 60_000, "2 hours 5 minutes"],
    [3_600_000, "1 hour"],
    [26 * 3_600_000 + 59_000, "1 day 2 hours"],
    [45_000, "45 seconds"],
    [61_000, "1 minute 1 second"],
    [500, "less than a second"],
    [-10, "less than a second"],
  ])("%d ms reads %j", (ms, text) => {
    expect(formatIdle(ms)).toBe(text);
  });
});

// The same assertions in three process time zones: UTC output never moves, explicit zones never move,
// and only the default-zone readable form follows the process zone.
describe.each([
  ["UTC", "UTC"],
  ["America/New_York", "EST"],
  ["Asia/Kolkata", "GMT+5:30"],
])("in process time zone %s", (zone, zoneName) => {
  useProcessTimeZone(zone);

  it("ISO output is UTC and zone-independent", () => {
    expect(formatIsoUtc(AT)).toBe("2026-02-04T10:30:00Z");
  });

  it("an explicit zone wins over the process zone", () => {
    expect(formatReadable(AT, "Europe/Berlin")).toBe("Wed 4 Feb 2026, 11:30 GMT+1");
    expect(formatReadable(AT, "UTC")).toBe("Wed 4 Feb 2026, 10:30 UTC");
    expect(formatTimeOfDay(AT, "America/Los_Angeles")).toBe("02:30 PST");
  });

  it("without a zone, readable times follow the process zone", () => {
    expect(formatReadable(AT)).toContain(zoneName);
    expect(formatTimestamp(AT)).toMatch(/^2026-02-04T10:30:00Z \(Wed 4 Feb 2026, \d\d:\d\d /);
  });

  it("an unknown zone name falls back to UTC instead of throwing", () => {
    expect(formatReadable(AT, "Mars/Olympus_Mons")).toBe("Wed 4 Feb 2026, 10:30 UTC");
  });

  it("idle durations do not depend on the zone (no calendar arithmetic)", () => {
    expect(formatIdle(25 * 3_600_000)).toBe("1 day 1 hour");
  });
});
