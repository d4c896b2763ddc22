import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../governance/config/config-parse.ts";
import { DEFAULT_CONFIG } from "../../../governance/config/config.ts";

const problems = (yaml: string) => {
  const r = parseConfig(yaml);
  return r.ok ? r.problems.map((p) => p.message) : r.problems.map((p) => p.message);
};

describe("budget config", () => {
  it("defaults: generous subagent guards, no tree budget, 4 per parent / 10 per project, loops on", () => {
    expect(DEFAULT_CONFIG.budgets).toMatchObject({ warnAt: 0.8, default: { modelRequests: 500, toolCalls: 1000, activeTime: 7_200_000 }, tree: {} });
    expect(DEFAULT_CONFIG.concurrency).toEqual({ perParent: 4, perProject: 10 });
    expect(DEFAULT_CONFIG.loops).toEqual({ enabled: true, repeat: 3, pingPong: 2, pollRepeat: 10, pollWait: 2_000, pollGap: 30_000, stopAfter: 2 });
  });
  it("parses a tree budget with a cost and a duration", () => {
    const r = parseConfig("budgets:\n  tree: { cost: 2, activeTime: 30m }\n  agents:\n    explore: { toolCalls: 50 }\n");
    expect(r.ok && r.config.budgets.tree).toEqual({ cost: 2, activeTime: 1_800_000 });
    expect(r.ok && r.config.budgets.agents.explore).toEqual({ toolCalls: 50 });
  });
  it.each([
    ["budgets:\n  tree: { cost: -1 }\n", "cost must be more than 0"],
    ["budgets:\n  tree: { toolCalls: 0 }\n", "toolCalls must be 1 or more"],
    ["budgets:\n  tree: { toolCalls: 1e12 }\n", "toolCalls above 1,000,000 is not a limit"],
    ["budgets:\n  tree: { tokens: 1e300 }\n", "tokens above"],
    ["budgets:\n  tree: { toolCalls: 2.5 }\n", "toolCalls must be a whole number"],
    ["budgets:\n  tree: { activeTime: 400d }\n", "activeTime must be between 1s and 7d"],
    ["budgets:\n  tree: { cost: 1e9 }\n", "cost above 100000 USD"],
    ["budgets:\n  warnAt: 2\n", "warnAt must be between 0.1 and 0.99"],
    ["concurrency:\n  perParent: -3\n", "perParent must be 1 or more"],
    ["loops:\n  repeat: 1\n", "repeat must be 2 or more"],
  ])("refuses %j with a clear message", (yaml, message) => {
    expect(problems(yaml).join("\n")).toContain(message);
  });
  it("did-you-mean for a typo'd budget key", () => {
    expect(problems("budgets:\n  tree: { toolCals: 5 }\n").join("\n")).toContain('did you mean "toolCalls"');
    expect(problems("concurency:\n  perParent: 2\n").join("\n")).toContain('did you mean "concurrency"');
  });
});
