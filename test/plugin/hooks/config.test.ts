import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { Governor } from "../../../plugin/governor.ts";
import { configHook, GOVERNANCE_TOOL_NAMES, roleForTexts } from "../../../plugin/hooks/config.ts";
import type { OpencodeApi } from "../../../plugin/opencode-api.ts";

const api: OpencodeApi = {
  abort: async () => true,
  status: async () => ({}),
  parentOf: async () => ({ parentId: null, agent: null }),
  toast: async () => undefined,
};

const denyAll = Object.fromEntries(GOVERNANCE_TOOL_NAMES.map((t) => [t, "deny"]));

describe("config hook: governance tools only for the agents a user talks to", () => {
  let dir: string;
  let gov: Governor;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-cfg-"));
    gov = new Governor({ directory: dir, client: {} as never }, { api });
    await gov.start();
  });
  afterEach(() => {
    gov.stopWatching();
    fs.rmSync(dir, { recursive: true, force: true });
  });

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
      agent: { scout: { mode: "subagent", permission: "allow" }, general: { permission: { governance_sessions: "allow" } } },
    };
    await configHook(gov, config);
    expect(config.agent.scout.permission).toEqual({ "*": "allow", ...denyAll });
    expect(config.agent.general.permission.governance_sessions).toBe("allow");
    expect(config.agent.general.permission.governance_stop).toBe("deny");
  });

  test("an agent the host offers no task tool is a LEAF in the texts, unless the project gives it task", async () => {
    const config: Record<string, any> = { agent: { explore: { permission: { task: { "*": "allow" } } }, reviewer: { mode: "subagent", permission: { task: "deny" } } } };
    await configHook(gov, config);
    expect(roleForTexts(gov, "general", "delegating")).toBe("leaf");
    expect(roleForTexts(gov, "reviewer", "delegating")).toBe("leaf");
    expect(roleForTexts(gov, "explore", "delegating")).toBe("delegating");
    expect(roleForTexts(gov, "build", "delegating")).toBe("delegating");
    expect(roleForTexts(gov, "general", "primary")).toBe("primary");
  });
});
