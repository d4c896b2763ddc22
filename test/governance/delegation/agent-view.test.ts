import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../governance/config/config.ts";
import { agentView } from "../../../governance/delegation/agent-view.ts";

const noTaskFor = (...names: string[]) => ({ lacksTask: (agent: string) => names.includes(agent) });

describe("agentView: who an agent is, as every text states it", () => {
  it("takes role and allow-list from the policy, level from the depth, the limit from the config", () => {
    expect(agentView({ agent: "governance-executor", depth: 1 }, DEFAULT_CONFIG)).toEqual({
      agent: "governance-executor",
      role: "delegating",
      level: 2,
      depth: 1,
      maxDepth: DEFAULT_CONFIG.delegation.maxDepth,
      mayDelegateTo: DEFAULT_CONFIG.agents["governance-executor"]?.mayDelegateTo,
    });
    // An agent governance does not know (or cannot name) is the default role: a leaf (decision 0024).
    expect(agentView({ agent: null, depth: 0 }, DEFAULT_CONFIG)).toMatchObject({ agent: null, role: "leaf", level: 1, mayDelegateTo: [] });
    expect(agentView({ agent: "x", depth: 7 }, DEFAULT_CONFIG).level).toBe(3);
  });

  it("a delegating agent the host offers no task tool is a LEAF with no targets; other roles are kept", () => {
    const host = noTaskFor("general", "governance-coordinator", "governance-builder");
    expect(agentView({ agent: "general", depth: 1 }, DEFAULT_CONFIG, host)).toMatchObject({ role: "leaf", mayDelegateTo: [] });
    expect(agentView({ agent: "governance-coordinator", depth: 0 }, DEFAULT_CONFIG, host).role).toBe("primary");
    expect(agentView({ agent: "governance-builder", depth: 2 }, DEFAULT_CONFIG, host).role).toBe("leaf");
    expect(agentView({ agent: "build", depth: 0 }, DEFAULT_CONFIG, host).role).toBe("delegating");
  });

  it("an inherited name (constructor) gets the default role, not Object.prototype", () => {
    expect(agentView({ agent: "constructor", depth: 1 }, DEFAULT_CONFIG).role).toBe(DEFAULT_CONFIG.defaultRole.role);
  });
});
