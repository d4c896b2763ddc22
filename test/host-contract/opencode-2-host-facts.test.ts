/**
 * Host facts on OpenCode 2 (issue 25 item 4): what OpenCode 1's `config` hook supplies, taken from what OpenCode 2's
 * released plugin API offers — the tools of each agent-loop request (plugin/opencode-2/host-facts.ts). The depth limit
 * has no plugin API there (`init` writes it; docs/opencode-2.md).
 */
import { afterEach, describe, expect, test } from "vitest";
import { V2Fixture } from "./v2-fixture.ts";

const f = new V2Fixture();
afterEach(() => f.stop());

describe("OpenCode 2 host facts come from the request's tools", () => {
  test("the governance tool is offered to the root, not to a subagent", async () => {
    await f.start();
    const r = await f.root();
    expect((await f.host.request(r)).tools).toContain("governance");
    const child = await f.spawn(r, "governance-executor", true);
    f.host.startExecution(child.id);
    await f.flush();
    const asked = await f.host.request(child.id);
    expect(asked.tools).not.toContain("governance");
    expect(asked.tools).toContain("shell");
  });

  test("an agent the host offers no `subagent` is told it is a LEAF; offered it again, it is not", async () => {
    await f.start();
    // `build` delegates by governance's policy; a project that denies it `subagent` makes it a leaf in fact.
    f.host.noSubagentFor.add("build");
    const r = await f.root("build");
    const denied = (await f.host.request(r)).system.join("\n");
    expect(denied).toContain("You are a LEAF agent");
    f.host.noSubagentFor.delete("build");
    const offered = (await f.host.request(r)).system.join("\n");
    expect(offered).not.toContain("You are a LEAF agent");
  });
});
