import * as z from "../zod.ts";

/**
 * What the first activity after a gap means for a session that has a record (seed 003, S4/S5).
 *
 * - `continue`: the gap is a pause inside normal work; carry on, no resume context.
 * - `resume`: the session comes back after a real break (or after an interruption); synthesize a resume.
 * - `expired`: the record is too old to resume; start a fresh S1 record and archive the old one.
 */
export const ResumeClass = z.enum(["continue", "resume", "expired"]);
export type ResumeClass = z.infer<typeof ResumeClass>;

export const ResumeWindowInput = z.object({
  /** Epoch ms of the last activity stored in the record. */
  lastActivityAt: z.number().int(),
  /** Epoch ms of the activity being classified (from the event, never from `Date.now()` here). */
  now: z.number().int(),
  /** The record was left `interrupted` (Escape / abort). */
  interrupted: z.boolean(),
  /** `resume.minIdle` in config (default 1 h, seed 003 S5 "idle 1–48 hours"). */
  minIdleMs: z.number().int().nonnegative(),
  /** `resume.maxIdle` in config (default 48 h of elapsed time). */
  maxIdleMs: z.number().int().positive(),
});
export type ResumeWindowInput = z.infer<typeof ResumeWindowInput>;

/**
 * Classifies a gap of `now − lastActivityAt` milliseconds. Pure; no clock, no time zone.
 *
 * Invariants (tested at ±1 ms):
 * - `idle ≥ maxIdleMs` → `expired`, even for an interrupted session: exactly 48 h is expired.
 * - otherwise `interrupted` → `resume`, whatever the gap (an interrupted session always gets its context).
 * - otherwise `idle ≥ minIdleMs` → `resume`: exactly 1 h is a resume.
 * - otherwise → `continue`.
 *
 * The windows are elapsed milliseconds between two epoch instants. Calendar arithmetic is deliberately absent:
 * across a DST change "two days later at the same wall-clock time" may be 47 or 49 elapsed hours, and only the
 * elapsed time decides. A negative gap (another process wrote a later timestamp, clock skew) counts as 0.
 */
export function classifyResume(input: ResumeWindowInput): ResumeClass {
  const idle = idleMs(input.lastActivityAt, input.now);
  if (idle >= input.maxIdleMs) return "expired";
  if (input.interrupted) return "resume";
  if (idle >= input.minIdleMs) return "resume";
  return "continue";
}

/** Elapsed ms between two instants, floored at 0 (see {@link classifyResume} on clock skew). */
export function idleMs(lastActivityAt: number, now: number): number {
  return Math.max(0, now - lastActivityAt);
}
