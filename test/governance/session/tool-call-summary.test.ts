import { describe, expect, test } from "vitest";
import { toolCallSummary } from "../../../governance/session/tool-call-summary.ts";

describe("toolCallSummary: both hosts' argument names", () => {
  test.each([
    ["OpenCode 1 read", "read", { filePath: "PLAN.md" }, "PLAN.md"],
    ["OpenCode 2 read (2.0.15 names the file `path`)", "read", { path: "PLAN.md", offset: 1 }, "PLAN.md"],
    ["OpenCode 1 task", "task", { subagent_type: "governance-executor", description: "do it" }, "governance-executor"],
    ["OpenCode 2 subagent, as the core's task (`agent`)", "task", { agent: "governance-executor", description: "do it" }, "governance-executor"],
    ["a shell command", "bash", { command: "npm test", description: "run" }, "npm test"],
  ])("%s", (_, tool, args, expected) => {
    expect(toolCallSummary(tool, args)).toBe(expected);
  });
});
