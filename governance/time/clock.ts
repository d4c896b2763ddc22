/**
 * The only source of "now" for governance code. Epoch milliseconds everywhere (on disk too), so the 48-hour and
 * 10-minute rules can be tested at their boundaries with a fake clock and never depend on the host's time zone.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export interface FakeClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

export function createFakeClock(startMs: number): FakeClock {
  let current = startMs;
  return {
    now: () => current,
    set(ms) {
      current = ms;
    },
    advance(ms) {
      current += ms;
    },
  };
}
