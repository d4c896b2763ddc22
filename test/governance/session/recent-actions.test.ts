import { describe, expect, it } from "vitest";
import { transition } from "../../../governance/session/session-machine.ts";
import { recentAction, toolCallSummary } from "../../../governance/session/tool-call-summary.ts";
import { T0, makeRecord } from "../fixtures/records.ts";
import { ctx } from "./machine-fixture.ts";

/** Issue 21 item 8: the post-compaction reminder's "last actions" are the session's real recent tool calls. */
describe("recent actions: every tool call, summarised and redacted, the last three", () => {
  it("a session that edits and runs commands has them as its last actions; a delegation reads 'delegated to'", () => {
    let r = makeRecord();
    const calls: [string, Record<string, unknown>][] = [
      ["read", { filePath: "src/a.ts" }],
      ["edit", { filePath: "src/app.ts" }],
      ["bash", { command: "npm test -- --token=ghp_abcdefghijklmnopqrstuvwxyz0123456789" }],
      ["task", { subagent_type: "governance-executor", prompt: "x" }],
    ];
    calls.forEach(([tool, args], i) => {
      r = transition(r, { type: "tool_before", at: T0 + i * 1000, tool, callId: `c${i}`, summary: toolCallSummary(tool, args) }, ctx).next!;
    });
    expect(r.recentActions).toHaveLength(3);
    expect(r.recentActions[0]).toBe("edit src/app.ts");
    expect(r.recentActions[1]).toMatch(/^bash npm test/);
    expect(r.recentActions[1]).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    expect(r.recentActions[2]).toBe("delegated to governance-executor");
  });
  it("recentAction: a tool without arguments is its name", () => {
    expect(recentAction("todoread", "")).toBe("todoread");
  });
});
