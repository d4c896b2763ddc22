import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../governance/config/config.ts";
import { mayUseGovernanceTool } from "../../../governance/delegation/governance-tool-access.ts";

describe("mayUseGovernanceTool: the governance tool is for the agents a user talks to", () => {
  it("a primary the config names, and one it does not name (the default role decides nothing here), keep it", () => {
    expect(mayUseGovernanceTool({ name: "governance-coordinator", subagent: false }, DEFAULT_CONFIG)).toBe(true);
    expect(mayUseGovernanceTool({ name: "build", subagent: false }, DEFAULT_CONFIG)).toBe(true);
  });

  it("a subagent never has it, whatever its role", () => {
    expect(mayUseGovernanceTool({ name: "governance-coordinator", subagent: true }, DEFAULT_CONFIG)).toBe(false);
    expect(mayUseGovernanceTool({ name: "general", subagent: true }, DEFAULT_CONFIG)).toBe(false);
  });

  it("an agent the config names a leaf does not have it, even as a primary", () => {
    expect(mayUseGovernanceTool({ name: "governance-builder", subagent: false }, DEFAULT_CONFIG)).toBe(false);
  });

  it("a name on Object.prototype is not a configured agent", () => {
    expect(mayUseGovernanceTool({ name: "constructor", subagent: false }, DEFAULT_CONFIG)).toBe(true);
  });
});
