import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SessionEvent } from "../../../governance/session/session-machine.ts";
import { checkedStepEvent } from "../../../governance/session/step-events.ts";

/**
 * The machine checks the two events of every step by hand instead of with its zod schema (issue 31). The hand check
 * may say "not sure" (the schema decides then), but whatever it accepts, the schema accepts with the very same value.
 */
const often = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) => fc.oneof({ arbitrary: good, weight: 10 }, { arbitrary: bad, weight: 1 });
const at = often(
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
  fc.oneof(fc.double(), fc.constantFrom(Number.MAX_SAFE_INTEGER + 1, -1, Number.NaN, "1", null, undefined), fc.bigInt()),
);
const text = often(fc.string({ maxLength: 80 }), fc.constantFrom(undefined, null, 1, {}, []));
const phase = often(
  fc.oneof(fc.constant(undefined), fc.string({ maxLength: 70 }), fc.constantFrom("  planning  ", " ", "", "x".repeat(60), ` ${"y".repeat(60)} `)),
  fc.constantFrom(null, 3, ["a"]),
);
const role = often(fc.constantFrom(undefined, "primary", "delegating", "leaf"), fc.constantFrom("root", null, 1, ""));
const event = fc.record(
  {
    type: often(fc.constantFrom("model_step", "tool_before"), fc.constantFrom("idle", "prompt", "created", undefined, 1)),
    at,
    phase,
    tool: text,
    callId: text,
    summary: text,
    role,
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);

describe("the hand check of a step's machine events", () => {
  it("accepts nothing the schema refuses, and gives what the schema gives", () => {
    let accepted = 0;
    fc.assert(
      fc.property(event, (e) => {
        const checked = checkedStepEvent(e);
        if (checked === undefined) return;
        accepted++;
        const parsed = SessionEvent.safeParse(e);
        expect(parsed.success).toBe(true);
        expect(checked).toStrictEqual(parsed.data);
      }),
      { numRuns: 5_000 },
    );
    // Most generated events are valid ones: the hand check must take them, or it saves nothing.
    expect(accepted).toBeGreaterThan(1_000);
  });

  it("takes the events the plugin sends on every step", () => {
    const step = { type: "model_step", at: 1_764_000_000_000, phase: "planning" } as const;
    const call = { type: "tool_before", at: 1_764_000_000_001, tool: "read", callId: "call_1", summary: "notes/1.md", role: "primary" } as const;
    expect(checkedStepEvent(step)).toStrictEqual(step);
    expect(checkedStepEvent(call)).toStrictEqual(call);
    expect(checkedStepEvent({ type: "model_step", at: 1 })).toStrictEqual({ type: "model_step", at: 1 });
  });

  it("leaves other events and doubtful fields to the schema", () => {
    expect(checkedStepEvent({ type: "idle", at: 1 })).toBeUndefined();
    expect(checkedStepEvent({ type: "model_step", at: 1.5 })).toBeUndefined();
    expect(checkedStepEvent({ type: "model_step", at: 1, phase: "   " })).toBeUndefined();
    expect(checkedStepEvent({ type: "tool_before", at: 1, tool: "read", callId: "c", summary: "s", role: "root" })).toBeUndefined();
  });
});
