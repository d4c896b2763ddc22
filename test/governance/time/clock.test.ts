import { describe, expect, it } from "vitest";
import { createFakeClock, systemClock } from "../../../governance/time/clock.ts";

describe("Clock", () => {
  it("the system clock reads epoch milliseconds", () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it("a fake clock moves only when told to", () => {
    const clock = createFakeClock(1_000);
    expect(clock.now()).toBe(1_000);
    clock.advance(250);
    expect(clock.now()).toBe(1_250);
    clock.set(42);
    expect(clock.now()).toBe(42);
  });
});
