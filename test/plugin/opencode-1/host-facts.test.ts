import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { PluginContext } from "../../../plugin/runtime/context.ts";
import { configHook, GOVERNANCE_TOOL_NAMES } from "../../../plugin/opencode-1/host-facts.ts";
import { type PluginFixture, pluginFixture } from "../fixture.ts";

const denyAll = Object.fromEntries(GOVERNANCE_TOOL_NAMES.map((t) => [t, "deny"]));

describe("config hook: the governance tool only for the agents a user talks to", () => {
  let f: PluginFixture;
  let gov: PluginContext;
  beforeEach(async () => {
    f = await pluginFixture();
    gov = f.rt.ctx;
  });
  afterEach(() => f.close());

  test("subagents, the built-in general/explore and governance leaves are denied the tools; primaries keep them", async () => {
    const config: Record<string, any> = {
      agent: {
        build: { mode: "primary" },
        "my-helper": { mode: "subagent", permission: { edit: "allow" } },
        "governance-builder": { mode: "all" },
        "governance-coordinator": { mode: "primary" },
      },
    };
    await configHook(gov, config);
    expect(config.agent.build.permission).toBeUndefined();
    expect(config.agent["governance-coordinator"].permission).toBeUndefined();
    expect(config.agent["my-helper"].permission).toEqual({ edit: "allow", ...denyAll });
    expect(config.agent.general.permission).toEqual(denyAll);
    expect(config.agent.explore.permission).toEqual(denyAll);
    expect(config.agent["governance-builder"].permission).toEqual(denyAll);
    expect(config.subagent_depth).toBe(gov.config.delegation.maxDepth + 1);
  });

  test("a permission the project set is kept: for one of the tools, and a blanket string becomes the catch-all", async () => {
    const config: Record<string, any> = {
      agent: { scout: { mode: "subagent", permission: "allow" }, general: { permission: { governance: "allow", read: "deny" } } },
    };
    await configHook(gov, config);
    expect(config.agent.scout.permission).toEqual({ "*": "allow", ...denyAll });
    expect(config.agent.general.permission.governance).toBe("allow");
    expect(config.agent.general.permission.read).toBe("deny");
  });

  test("an agent the host offers no task tool is a LEAF in the texts, unless the project gives it task", async () => {
    const config: Record<string, any> = {
      agent: { general: { permission: { task: { "*": "allow" } } }, plan: { permission: { task: "deny" } } },
    };
    await configHook(gov, config);
    // general and plan delegate by governance's policy; the host offers plan no task (the project denied it): a LEAF in
    // the texts. general was given task by the project: DELEGATING.
    expect(gov.viewOf("plan", 0)).toMatchObject({ role: "leaf", mayDelegateTo: [] });
    expect(gov.viewOf("general", 1).role).toBe("delegating");
    expect(gov.viewOf("build", 0).role).toBe("delegating");
    // An agent governance does not know is a leaf whatever the host offers it (decision 0024).
    expect(gov.viewOf("reviewer", 1).role).toBe("leaf");
    expect(gov.viewOf("governance-coordinator", 0).role).toBe("primary");
  });
});

describe("config hook: the project's own agents are named in the governance.yaml this start generated (decision 0030)", () => {
  const agents = () => ({
    orchestrator: { mode: "primary", permission: { task: "allow" } },
    worker: { mode: "subagent" },
    build: { mode: "primary", permission: { task: "deny" } },
  });

  test("named with the roles their settings give, once; a later agent is only remembered for its refusal", async () => {
    const f = await pluginFixture();
    try {
      await configHook(f.rt.ctx, { agent: agents() });
      const text = readFileSync(path.join(f.dir, ".opencode", "governance.yaml"), "utf8");
      expect(text).toContain("  # from OpenCode's config: mode primary, task allow\n  orchestrator:\n    role: primary\n");
      expect(f.rt.ctx.config.agents.orchestrator).toEqual({ role: "primary", mayDelegateTo: ["*"] });
      expect(f.rt.ctx.config.agents.worker).toEqual({ role: "leaf", mayDelegateTo: [] });
      // OpenCode's own `build` keeps its shipped entry whatever the project set.
      expect(f.rt.ctx.config.agents.build).toEqual({ role: "delegating", mayDelegateTo: ["*"] });
      expect(await f.audit("config_agents_named")).toEqual([expect.objectContaining({ agents: ["orchestrator", "worker"] })]);
      await configHook(f.rt.ctx, { agent: { ...agents(), later: { mode: "primary" } } });
      expect(readFileSync(path.join(f.dir, ".opencode", "governance.yaml"), "utf8")).toBe(text);
      expect(f.rt.ctx.hostAgents.get("later")).toMatchObject({ mode: "primary" });
    } finally {
      await f.close();
    }
  });

  test("a governance.yaml the project already has is never rewritten", async () => {
    const f = await pluginFixture({ config: "phase: release\n" });
    try {
      await configHook(f.rt.ctx, { agent: agents() });
      expect(readFileSync(path.join(f.dir, ".opencode", "governance.yaml"), "utf8")).toBe("phase: release\n");
      expect(Object.hasOwn(f.rt.ctx.config.agents, "orchestrator")).toBe(false);
    } finally {
      await f.close();
    }
  });
});
