import { expect, test } from "vitest";
import { evaluateSpawn, GatedSpawns } from "../../../plugin/opencode-2/tool-calls.ts";
import type { PermissionEvaluateEvent } from "../../../plugin/opencode-2/types.ts";
import { pluginFixture } from "../fixture.ts";

/**
 * OpenCode 2's `permission.hook("evaluate")` for `subagent` (docs/decisions/0062-spawn-refused-by-permission.md): deny
 * a spawn governance refuses that the gate did not see; leave a call the gate passed, every other action and every
 * allowed spawn as the host answered (never widened). The real binary: test/e2e/opencode-2-spawn-permission.test.ts.
 */
const ask = (
  sessionID: string,
  agent: string,
  target: string,
  callId: string,
  effect: PermissionEvaluateEvent["effect"] = "allow",
): PermissionEvaluateEvent => ({
  sessionID,
  agent,
  action: "subagent",
  resources: [target],
  source: { type: "tool", messageID: "msg_1", id: callId },
  effect,
});

test("a leaf's spawn the gate did not see is denied with governance's text and audited once; an allowed one keeps the host's answer", async () => {
  const f = await pluginFixture();
  try {
    const gated = new GatedSpawns();
    f.parents.set("ses_leaf0000000000000000001", { parentId: null, agent: "explore" });
    const refused = ask("ses_leaf0000000000000000001", "explore", "general", "call_1");
    await evaluateSpawn(f.rt, gated, refused);
    expect(refused).toMatchObject({ effect: "deny", message: expect.stringContaining("general") });
    expect(await f.audit("delegation_blocked")).toEqual([expect.objectContaining({ kind: "leaf", targetAgent: "general" })]);

    f.parents.set("ses_build000000000000000001", { parentId: null, agent: "build" });
    const asked = ask("ses_build000000000000000001", "build", "general", "call_2", "ask");
    await evaluateSpawn(f.rt, gated, asked);
    expect(asked.effect).toBe("ask");
    expect(asked.message).toBeUndefined();
  } finally {
    await f.close();
  }
});

test("a call the gate passed, and any other action, is left as the host answered", async () => {
  const f = await pluginFixture();
  try {
    const gated = new GatedSpawns();
    f.parents.set("ses_leaf0000000000000000002", { parentId: null, agent: "explore" });
    gated.passed("call_9", "continue");
    const continued = ask("ses_leaf0000000000000000002", "explore", "general", "call_9");
    await evaluateSpawn(f.rt, gated, continued);
    expect(continued.effect).toBe("allow");
    const shell = { ...ask("ses_leaf0000000000000000002", "explore", "rm -rf x", "call_10"), action: "shell" };
    await evaluateSpawn(f.rt, gated, shell);
    expect(shell.effect).toBe("allow");
    expect(await f.audit("delegation_blocked")).toEqual([]);
  } finally {
    await f.close();
  }
});

test("the gated calls are bounded: a process that lives for days keeps the newest 256", () => {
  const gated = new GatedSpawns();
  for (let i = 0; i < 300; i++) gated.passed(`call_${i}`, "spawn");
  expect(gated.take("call_0")).toBeUndefined();
  expect(gated.take("call_299")).toBe("spawn");
  expect(gated.take("call_299")).toBeUndefined();
});
