import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEvents } from "../../../plugin/opencode-1/events.ts";
import { MessageUsage, parseMessageUsage, SessionStatus, SessionUsage } from "../../../plugin/opencode-1/types.ts";

/**
 * `message.updated` and `session.updated` come several times per model step, so their usage is read without a zod
 * parse (issue 31). These properties hold the hand-written readers to the schemas they replace: for any input, the
 * same verdict and the same figures.
 */
const ID = "ses_3f1c2b9e0ffeq7Yd1kB2mN4pQr";
/** Mostly valid values (so both verdicts are reached), and every kind of invalid one. */
const often = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) => fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: bad, weight: 1 });
const count = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.double({ min: 0, max: 1e15, noNaN: true }), fc.constantFrom(0, -0, 1e15));
const badCount = fc.oneof(fc.constantFrom(-1, 1e15 + 1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null, true, "1"), fc.double());
const field = often(fc.oneof(count, fc.constant(undefined)), badCount);
const tokens = often(
  fc.record(
    {
      input: field,
      output: field,
      reasoning: field,
      cache: often(fc.oneof(fc.constant(undefined), fc.record({ read: field, write: field }, { requiredKeys: [] })), fc.constantFrom(null, 3, [])),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom(undefined, null, [], 0, "x"),
);
const info = fc.record(
  {
    id: often(fc.constant(ID), fc.oneof(fc.string({ minLength: 100, maxLength: 102 }), fc.constant(7))),
    sessionID: often(fc.constant(ID), fc.constantFrom(undefined, 1)),
    role: often(fc.constant("assistant"), fc.constantFrom("user", undefined)),
    cost: field,
    tokens,
    title: fc.constantFrom(undefined, "", "a title", 5),
    extra: fc.anything(),
  },
  { requiredKeys: ["tokens"] },
);
const properties = often(
  fc.record({ sessionID: often(fc.constant(ID), fc.constantFrom(undefined, 2)), info: often(info, fc.constantFrom(null, [], 3)) }, { requiredKeys: ["info"] }),
  fc.constantFrom(null, [], {}),
);

/** Token counts as the schema-based reading rounded them. */
function tokensOf(t: { input: number; output: number; reasoning: number; cache?: { read?: number; write?: number } }) {
  const int = (n: number) => Math.round(n);
  return { input: int(t.input), output: int(t.output), reasoning: int(t.reasoning), cacheRead: int(t.cache?.read ?? 0), cacheWrite: int(t.cache?.write ?? 0) };
}

/** The schema-based reading these replaced (the code before issue 31), as the reference. */
function messageUsageBySchema(raw: unknown) {
  const i = (raw as { properties?: { info?: { role?: unknown; tokens?: unknown } } }).properties?.info;
  if (i?.role !== "assistant" || !i.tokens) return undefined;
  const e = MessageUsage.safeParse(raw);
  if (!e.success || !e.data.properties.info.tokens) return undefined;
  const m = e.data.properties.info;
  return { type: "message_usage", sessionId: m.sessionID, messageId: m.id, tokens: tokensOf(m.tokens!), cost: m.cost ?? 0 };
}

function sessionUpdatedBySchema(raw: unknown) {
  const e = SessionUsage.safeParse(raw);
  if (!e.success) return [];
  const i = e.data.properties.info;
  const out: unknown[] = [];
  if (i.tokens) {
    out.push({ type: "usage", sessionId: i.id, tokens: tokensOf(i.tokens), cost: i.cost ?? 0 });
  }
  if (typeof i.title === "string" && i.title.length > 0) out.push({ type: "titled", sessionId: i.id, title: i.title });
  return out;
}

/**
 * For 3 000 generated `properties` of an event of `type`: our reading equals the schema's, and at least `least` of
 * them are accepted (a comparison of only refusals would prove nothing).
 */
function sameAsSchema<P>(
  type: string,
  properties: fc.Arbitrary<P>,
  ours: (raw: unknown) => unknown,
  bySchema: (raw: unknown) => unknown,
  accepted: (answer: unknown) => boolean,
  least: number,
): void {
  let n = 0;
  fc.assert(
    fc.property(properties, (p) => {
      const raw = { type, properties: p };
      const answer = ours(raw);
      expect(answer).toEqual(bySchema(raw));
      if (accepted(answer)) n++;
    }),
    { numRuns: 3000 },
  );
  expect(n).toBeGreaterThan(least);
}

function sessionStatusBySchema(raw: unknown) {
  const e = SessionStatus.safeParse(raw);
  return e.success ? [{ type: "status", sessionId: e.data.properties.sessionID, status: e.data.properties.status.type }] : [];
}

describe("usage readers without zod (issue 31)", () => {
  it("message.updated: the same event, or none, as the MessageUsage schema, for any input", () => {
    sameAsSchema("message.updated", properties, parseMessageUsage, messageUsageBySchema, (e) => e !== undefined, 30);
  });

  it("session.updated: the same usage and title events as the SessionUsage schema, for any input", () => {
    const usage = (events: unknown) => (events as { type: string }[]).some((e) => e.type === "usage");
    sameAsSchema("session.updated", properties, parseEvents, sessionUpdatedBySchema, usage, 30);
  });

  it("session.status: the same status event, or none, as the SessionStatus schema, for any input", () => {
    const status = often(
      fc.record({ type: often(fc.constantFrom("busy", "idle", "retry"), fc.constantFrom(undefined, 1, null)), extra: fc.anything() }, { requiredKeys: [] }),
      fc.constantFrom(null, [], "busy", 1, Object.assign([], { type: "busy" })),
    );
    const props = often(
      fc.record({ sessionID: often(fc.constant(ID), fc.constantFrom(undefined, 2, null)), status, extra: fc.anything() }, { requiredKeys: [] }),
      fc.constantFrom(null, [], 3),
    );
    sameAsSchema("session.status", props, parseEvents, sessionStatusBySchema, (events) => (events as unknown[]).length > 0, 300);
  });
});
