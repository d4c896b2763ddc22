import { describe, expect, it } from "vitest";
import type { HostEvent } from "../../../plugin/runtime/host-event.ts";
import { parseEvents } from "../../../plugin/opencode-1/events.ts";

const ID = "ses_3f1c2b9e0ffeq7Yd1kB2mN4pQr";
const PARENT = "ses_3f1c2a000ffeq7Yd1kB2mN4pQr";

/** The one event a raw OpenCode event means (all but `session.updated` mean at most one). */
function parseEvent(raw: unknown): HostEvent | undefined {
  const events = parseEvents(raw);
  expect(events.length).toBeLessThanOrEqual(1);
  return events[0];
}

/**
 * The 1.18 runtime sends v2-shaped payloads (`properties.sessionID`, `properties.info`) although the plugin package
 * types events as v1. These payloads are shaped like what OpenCode 1.18 was observed to emit; a parser that only
 * understood one shape would silently miss children, aborts or idles.
 */
describe("parseEvent: session.created", () => {
  it("v2: a task child carries its parent and agent in properties.info", () => {
    const raw = {
      type: "session.created",
      properties: { sessionID: ID, info: { id: ID, parentID: PARENT, agent: "governance-executor", title: "inspect", time: { created: 1 } } },
    };
    expect(parseEvent(raw)).toEqual({ type: "created", sessionId: ID, parentId: PARENT, agent: "governance-executor", title: "inspect" });
  });

  it("v1: info only, no parent → a root with no agent (primaries learn their agent from messages)", () => {
    expect(parseEvent({ type: "session.created", properties: { info: { id: ID } } })).toEqual({
      type: "created",
      sessionId: ID,
      parentId: null,
      agent: null,
      title: null,
    });
  });

  it("an explicit null parentID is a root", () => {
    expect(parseEvent({ type: "session.created", properties: { sessionID: ID, info: { id: ID, parentID: null } } })).toMatchObject({ parentId: null });
  });

  it("without info it cannot be linked: ignored", () => {
    expect(parseEvent({ type: "session.created", properties: { sessionID: ID } })).toBeUndefined();
  });
});

describe("parseEvent: session.error", () => {
  it("MessageAbortedError (Escape, SDK abort) → aborted", () => {
    const raw = {
      type: "session.error",
      properties: { sessionID: ID, error: { name: "MessageAbortedError", data: { message: "The operation was aborted." } } },
    };
    expect(parseEvent(raw)).toEqual({ type: "aborted", sessionId: ID });
  });

  it.each(["ProviderAuthError", "APIError", "UnknownError"])("%s → errored with the name", (name) => {
    expect(parseEvent({ type: "session.error", properties: { sessionID: ID, error: { name, data: {} } } })).toEqual({ type: "errored", sessionId: ID, name });
  });

  it("an error without a name object still counts as errored, never as aborted", () => {
    expect(parseEvent({ type: "session.error", properties: { sessionID: ID } })).toEqual({ type: "errored", sessionId: ID, name: "UnknownError" });
  });

  it("without a session id it cannot be attributed: ignored", () => {
    expect(parseEvent({ type: "session.error", properties: { error: { name: "MessageAbortedError" } } })).toBeUndefined();
  });
});

describe("parseEvent: idle, compacted", () => {
  it.each([
    ["session.idle", "idle"],
    ["session.compacted", "compacted"],
  ] as const)("%s with v2 properties.sessionID → %s", (type, kind) => {
    expect(parseEvent({ type, properties: { sessionID: ID } })).toEqual({ type: kind, sessionId: ID });
  });

  it("the v1 shape (properties.info.id) is read too", () => {
    expect(parseEvent({ type: "session.compacted", properties: { info: { id: ID, title: "x" } } })).toEqual({ type: "compacted", sessionId: ID });
  });

  it("session.deleted names its session (issue 21 item 3); events the plugin does not act on (session.updated) are ignored", () => {
    expect(parseEvent({ type: "session.deleted", properties: { sessionID: ID } })).toEqual({ type: "deleted", sessionId: ID });
    expect(parseEvent({ type: "session.deleted", properties: { info: { id: ID, title: "x" } } })).toEqual({ type: "deleted", sessionId: ID });
    expect(parseEvent({ type: "session.updated", properties: { sessionID: ID } })).toBeUndefined();
  });

  it("session.updated: its usage when it has tokens, and its title (OpenCode's generated title or a rename)", () => {
    const tokens = { input: 10, output: 5, reasoning: 0, cache: { read: 2, write: 1 } };
    expect(parseEvents({ type: "session.updated", properties: { sessionID: ID, info: { id: ID, title: "Fix the login bug", tokens, cost: 0.5 } } })).toEqual([
      { type: "usage", sessionId: ID, tokens: { input: 10, output: 5, reasoning: 0, cacheRead: 2, cacheWrite: 1 }, cost: 0.5 },
      { type: "titled", sessionId: ID, title: "Fix the login bug" },
    ]);
    expect(parseEvents({ type: "session.updated", properties: { info: { id: ID, title: "Renamed" } } })).toEqual([
      { type: "titled", sessionId: ID, title: "Renamed" },
    ]);
    for (const title of ["", 7, null, undefined]) expect(parseEvents({ type: "session.updated", properties: { info: { id: ID, title } } })).toEqual([]);
  });

  it("the top-level sessionID wins over info.id when both are present", () => {
    expect(parseEvent({ type: "session.idle", properties: { sessionID: ID, info: { id: PARENT } } })).toEqual({ type: "idle", sessionId: ID });
  });
});

describe("parseEvent: status and todos", () => {
  it("session.status carries busy/idle/retry", () => {
    expect(parseEvent({ type: "session.status", properties: { sessionID: ID, status: { type: "busy" } } })).toEqual({
      type: "status",
      sessionId: ID,
      status: "busy",
    });
    expect(parseEvent({ type: "session.status", properties: { sessionID: ID, status: { type: "retry", attempt: 2, message: "429" } } })).toMatchObject({
      status: "retry",
    });
  });

  it("todo.updated counts all and open todos (completed and cancelled are closed)", () => {
    const todos = ["pending", "in_progress", "completed", "cancelled", "pending"].map((status, i) => ({
      id: String(i),
      content: `t${i}`,
      status,
      priority: "high",
    }));
    expect(parseEvent({ type: "todo.updated", properties: { sessionID: ID, todos } })).toEqual({ type: "todos", sessionId: ID, total: 5, open: 3 });
  });

  it("an empty todo list is zero of zero, not ignored", () => {
    expect(parseEvent({ type: "todo.updated", properties: { sessionID: ID, todos: [] } })).toEqual({ type: "todos", sessionId: ID, total: 0, open: 0 });
  });
});

describe("parseEvent: anything else is ignored, never thrown", () => {
  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "session.idle"],
    ["a number", 42],
    ["an array", [{ type: "session.idle" }]],
    ["no type", { properties: { sessionID: ID } }],
    ["an unknown type", { type: "message.part.removed", properties: { sessionID: ID } }],
    ["permission.asked", { type: "permission.asked", properties: { sessionID: ID, id: "per_1" } }],
    ["no properties", { type: "session.idle" }],
    ["properties not an object", { type: "session.created", properties: "x" }],
    ["a numeric session id", { type: "session.idle", properties: { sessionID: 7 } }],
    ["status without status", { type: "session.status", properties: { sessionID: ID } }],
    ["todos not a list", { type: "todo.updated", properties: { sessionID: ID, todos: "3" } }],
    ["a todo without status", { type: "todo.updated", properties: { sessionID: ID, todos: [{ content: "x" }] } }],
    ["created with info.id missing", { type: "session.created", properties: { info: { parentID: PARENT } } }],
  ])("%s → undefined", (_label, raw) => {
    expect(parseEvent(raw)).toBeUndefined();
  });
});

describe("parseEvent: streamed output is a sign of life", () => {
  it.each(["message.part.updated", "message.part.delta"])("%s → output", (type) => {
    expect(parseEvent({ type, properties: { sessionID: "ses_abc12345678", delta: "." } })).toEqual({ type: "output", sessionId: "ses_abc12345678" });
  });
});

describe("parseEvent: the end of a tool call (issue 26 item 2)", () => {
  const part = (status: string) => ({
    type: "message.part.updated",
    properties: { sessionID: ID, part: { type: "tool", sessionID: ID, callID: "call_1", tool: "task", state: { status } } },
  });
  it("a tool part that completed or failed ends its call (the only signal when no tool.execute.after runs)", () => {
    // The tool's name and times ride along for telemetry's span: the same one parse feeds both (issue 25 item 4).
    const tool = (status: string) => ({ tool: "task", status, start: 0, end: 0 });
    expect(parseEvent(part("error"))).toEqual({ type: "output", sessionId: ID, toolEnded: "call_1", tool: tool("error") });
    expect(parseEvent(part("completed"))).toEqual({ type: "output", sessionId: ID, toolEnded: "call_1", tool: tool("completed") });
  });
  it("a running or pending tool part, or a text part, is only a sign of life", () => {
    expect(parseEvent(part("running"))).toEqual({ type: "output", sessionId: ID });
    expect(parseEvent(part("pending"))).toEqual({ type: "output", sessionId: ID });
    expect(parseEvent({ type: "message.part.updated", properties: { sessionID: ID, part: { type: "text", text: "x" } } })).toEqual({
      type: "output",
      sessionId: ID,
    });
  });
});

describe("parseEvent: what the host reports for the coverage check (issue 25 item 5)", () => {
  const S = "ses_abc12345678";
  it("a `step-start` part is a model step", () => {
    expect(parseEvent({ type: "message.part.updated", properties: { part: { type: "step-start", sessionID: S } } })).toEqual({
      type: "output",
      sessionId: S,
      step: true,
    });
  });
  it("a tool part completed or in error is a finished call (by call id); running is not", () => {
    const part = (status: string) => ({
      type: "message.part.updated",
      properties: { part: { type: "tool", sessionID: S, callID: "call_1", state: { status } } },
    });
    expect(parseEvent(part("completed"))).toEqual({ type: "output", sessionId: S, toolEnded: "call_1" });
    expect(parseEvent(part("error"))).toEqual({ type: "output", sessionId: S, toolEnded: "call_1" });
    expect(parseEvent(part("running"))).toEqual({ type: "output", sessionId: S });
  });
});
