import { Ajv } from "ajv";
import { describe, expect, test } from "vitest";
import * as z from "../../../governance/zod.ts";
import { compareVersions, coreToolName, hostLineOf, hostToolName } from "../../../governance/host/host-lines.ts";
import { taskOutcome } from "../../../plugin/opencode-2/tool-calls.ts";
import { parseV2Event } from "../../../plugin/opencode-2/events.ts";
import { GOVERNANCE_TOOL_ARGS, GOVERNANCE_TOOL_INPUT } from "../../../plugin/hooks/governance-tool.ts";

const S = "ses_aaaaaaaaaaaaaaaaaaaaaaaaaa";
const ev = (type: string, data: Record<string, unknown> = {}) => ({ id: "evt_1", type, data: { sessionID: S, ...data }, durable: { aggregateID: S } });

describe("OpenCode 2 events → the governance events OpenCode 1's adapter produces", () => {
  test("turn boundary, Escape, compaction", () => {
    expect(parseV2Event(ev("session.created", { parentID: "ses_p", location: { directory: "/x" } }))).toEqual([
      { type: "created", sessionId: S, parentId: "ses_p", agent: null, title: null },
    ]);
    expect(parseV2Event(ev("session.execution.started"))).toEqual([{ type: "status", sessionId: S, status: "busy" }]);
    expect(parseV2Event(ev("session.execution.succeeded")).map((e) => e.type)).toEqual(["status", "idle"]);
    expect(parseV2Event(ev("session.execution.failed", { error: { _tag: "ProviderError" } }))[0]).toEqual({
      type: "errored",
      sessionId: S,
      name: "ProviderError",
    });
    expect(parseV2Event(ev("session.execution.interrupted", { reason: "user" })).map((e) => e.type)).toEqual(["status", "aborted"]);
    // Governance sees only the idle; the reason is telemetry's (`turn_cut`, read by signalsOf, never by handleEvent).
    expect(parseV2Event(ev("session.execution.interrupted", { reason: "superseded" })).map((e) => e.type)).toEqual(["status", "turn_cut"]);
    expect(parseV2Event(ev("session.compaction.ended", { reason: "auto" }))).toEqual([{ type: "compacted", sessionId: S, trigger: "auto" }]);
    expect(parseV2Event(ev("session.compaction.ended", { reason: "manual" }))).toEqual([{ type: "compacted", sessionId: S, trigger: "summarize" }]);
  });
  test("title: session.created's when it has one, session.renamed for a new one (packages/schema/src/session-event.ts)", () => {
    expect(parseV2Event(ev("session.created", { title: "Explore the auth module" }))).toMatchObject([{ type: "created", title: "Explore the auth module" }]);
    expect(parseV2Event(ev("session.renamed", { title: "Fix the login bug" }))).toEqual([{ type: "titled", sessionId: S, title: "Fix the login bug" }]);
    expect(parseV2Event(ev("session.renamed", { title: "" }))).toEqual([]);
    expect(parseV2Event(ev("session.renamed", { title: 3 }))).toEqual([]);
  });
  test("usage: the session's tokens and cost, as OpenCode 1's session.updated gives them to the budget", () => {
    const usage = { cost: 0.0017, tokens: { input: 10995, output: 2, reasoning: 51, cache: { read: 7, write: 0 } } };
    expect(parseV2Event(ev("session.usage.updated", usage))).toEqual([
      { type: "usage", sessionId: S, tokens: { input: 10995, output: 2, reasoning: 51, cacheRead: 7, cacheWrite: 0 }, cost: 0.0017 },
    ]);
    expect(parseV2Event(ev("session.usage.updated", { cost: -1, tokens: { input: "x" } }))).toEqual([
      { type: "usage", sessionId: S, tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 },
    ]);
  });
  test("streamed fragments (answer, thinking, tool input) are signs of life; the rest of the stream is not", () => {
    for (const type of ["session.text.delta", "session.reasoning.delta", "session.tool.input.delta"])
      expect(parseV2Event(ev(type, { delta: "x" }))).toEqual([{ type: "output", sessionId: S }]);
    for (const type of ["session.text.started", "session.compaction.delta", "session.step.ended"]) expect(parseV2Event(ev(type))).toEqual([]);
  });
  test("a finished text part is the answer a stopped subagent hands back (issue 44; 2.0.15's session.text.ended schema)", () => {
    const ended = { assistantMessageID: "msg_1", ordinal: 0, text: "Wrote a.ts; b.ts next.", state: {} };
    expect(parseV2Event(ev("session.text.ended", ended))).toEqual([{ type: "answer", sessionId: S, text: "Wrote a.ts; b.ts next." }]);
    expect(parseV2Event(ev("session.text.ended", { ...ended, text: "  " }))).toEqual([{ type: "output", sessionId: S }]);
  });
  test("what the host reports for the coverage check: a model step, a finished tool call (issue 25 item 5)", () => {
    expect(parseV2Event(ev("session.step.started", { agent: "a" }))).toEqual([{ type: "output", sessionId: S, step: true }]);
    expect(parseV2Event(ev("session.tool.success", { id: "call_1" }))).toEqual([{ type: "output", sessionId: S, toolEnded: "call_1" }]);
    expect(parseV2Event(ev("session.tool.failed", { id: "call_2" }))).toEqual([{ type: "output", sessionId: S, toolEnded: "call_2" }]);
    expect(parseV2Event(ev("session.tool.failed", {}))).toEqual([{ type: "output", sessionId: S }]);
  });
  test("`inactivity` (release line): the host stopped a stalled turn — aborted with cause host, not idle", () => {
    expect(parseV2Event(ev("session.execution.interrupted", { reason: "inactivity" }))).toEqual([
      { type: "status", sessionId: S, status: "idle" },
      { type: "aborted", sessionId: S, cause: "host" },
    ]);
  });
  test("the deprecated V1-named events and hostile input give nothing", () => {
    for (const raw of [ev("session.idle"), ev("session.status"), null, 42, { type: 1 }, { type: "session.created" }]) expect(parseV2Event(raw)).toEqual([]);
  });
});

describe("names and versions in one place", () => {
  test("OpenCode 2's tool names map to the core's", () => {
    expect(coreToolName(2, "subagent")).toBe("task");
    expect(coreToolName(2, "shell")).toBe("bash");
    expect(coreToolName(2, "read")).toBe("read");
    expect(coreToolName(1, "subagent")).toBe("subagent");
  });
  test("and back: a text names the core's tools as the host offers them (issue 40: 2.0.15 has no `bash`)", () => {
    expect(hostToolName(2, "bash")).toBe("shell");
    expect(hostToolName(2, "task")).toBe("subagent");
    expect(hostToolName(2, "read")).toBe("read");
    expect(hostToolName(1, "bash")).toBe("bash");
  });
  test("host lines from `opencode --version`", () => {
    expect(hostLineOf("1.18.33")).toBe(1);
    expect(hostLineOf("2.0.17")).toBe(2);
    expect(hostLineOf("0.0.0-beta-17728")).toBe(2);
    expect(hostLineOf("0.5.29")).toBeUndefined();
    expect(compareVersions("1.14.41", "1.15.13")).toBe(-1);
    expect(compareVersions("1.18.3", "1.18.33")).toBe(-1);
  });
  test("OpenCode 2's subagent results (subagent.ts @ 03cce408) close the child with the right outcome", () => {
    expect(taskOutcome('<subagent sessionID="ses_x" state="completed">\nok\n</subagent>')).toBe("completed");
    expect(taskOutcome("Subagent cancelled (sessionID: ses_x)")).toBe("aborted");
    expect(taskOutcome("Subagent failed (sessionID: ses_x): boom")).toBe("failed");
  });
});

describe("the governance tool's JSON Schema (OpenCode 2) agrees with its zod args (OpenCode 1)", () => {
  const validate = new Ajv({ strict: false }).compile(GOVERNANCE_TOOL_INPUT);
  const zod = z.object(GOVERNANCE_TOOL_ARGS).strict();
  const cases: unknown[] = [
    { action: "sessions" },
    { action: "sessions", all: true },
    { action: "stop", target: "ses_x", level: 2, text: "r" },
    { action: "stop", target: "ses_x", reason: "r" },
    { action: "inject", target: "x", text: "t" },
    { action: "stop", level: 4 },
    { action: "stop", level: 1.5 },
    { action: "nope" },
    {},
    { action: "stop", text: "x".repeat(501) },
    { action: "sessions", extra: 1 },
  ];
  test.each(cases.map((c) => [JSON.stringify(c).slice(0, 60), c] as const))("%s", (_name, input) => {
    expect(validate(input)).toBe(zod.safeParse(input).success);
  });
});
