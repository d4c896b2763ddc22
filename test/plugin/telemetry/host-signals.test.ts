import { describe, expect, test } from "vitest";
import { parseEvents } from "../../../plugin/opencode-1/events.ts";
import { parseV2Event } from "../../../plugin/opencode-2/events.ts";
import { signalsOf } from "../../../plugin/telemetry/host-signals.ts";

/** Telemetry reads the adapter's one parse (issue 25 item 4): the host's parser, then `signalsOf`. */
const parseHostSignals = (raw: unknown) => {
  const o = raw as { data?: unknown; properties?: unknown } | null;
  return signalsOf(o && typeof o === "object" && o.data && !o.properties ? parseV2Event(raw) : parseEvents(raw));
};

const S = "ses_aaaaaaaaaaaaaaaaaaaaaaaaaa";
/** An OpenCode 2 event as `ctx.event.subscribe()` yields it (packages/schema/src/session-event.ts @ 03130971). */
const v2 = (type: string, data: Record<string, unknown> = {}) => ({ id: "evt_1", type, data: { sessionID: S, ...data }, durable: { aggregateID: S } });

describe("telemetry signals from OpenCode 2's events (the same turn spans as on OpenCode 1)", () => {
  test("a turn: started → step (agent, model) → step usage → succeeded", () => {
    expect(parseHostSignals(v2("session.created", { parentID: "ses_p" }))).toEqual([{ type: "created", sessionId: S, parentId: "ses_p" }]);
    expect(parseHostSignals(v2("session.execution.started"))).toEqual([{ type: "busy", sessionId: S }]);
    expect(parseHostSignals(v2("session.step.started", { assistantMessageID: "msg_1", agent: "build", model: { providerID: "p", id: "m" } }))).toEqual([
      { type: "assistant", sessionId: S, messageId: "msg_1", provider: "p", model: "m", agent: "build" },
    ]);
    expect(
      parseHostSignals(
        v2("session.step.ended", { assistantMessageID: "msg_1", cost: 0.1, tokens: { input: 10, output: 2, reasoning: 3, cache: { read: 4, write: 5 } } }),
      ),
    ).toEqual([{ type: "assistant", sessionId: S, messageId: "msg_1", tokens: { input: 10, output: 5, cacheRead: 4, cacheWrite: 5 } }]);
    expect(parseHostSignals(v2("session.execution.succeeded"))).toEqual([{ type: "idle", sessionId: S }]);
  });

  test("the end of a turn that did not succeed says how, then that it ended", () => {
    expect(parseHostSignals(v2("session.execution.interrupted", { reason: "user" }))).toEqual([
      { type: "error", sessionId: S, name: "MessageAbortedError" },
      { type: "idle", sessionId: S },
    ]);
    expect(parseHostSignals(v2("session.execution.failed", { error: { _tag: "ProviderError" } }))).toEqual([
      { type: "error", sessionId: S, name: "ProviderError" },
      { type: "idle", sessionId: S },
    ]);
  });

  test("OpenCode 1's shape still reads as before; hostile input gives nothing", () => {
    expect(parseHostSignals({ type: "session.status", properties: { sessionID: S, status: { type: "busy" } } })).toEqual([{ type: "busy", sessionId: S }]);
    for (const raw of [
      null,
      7,
      { type: "session.execution.started", data: {} },
      { type: "session.step.ended", data: { sessionID: S } },
      v2("session.text.delta"),
    ])
      expect(parseHostSignals(raw)).toEqual([]);
  });
});
