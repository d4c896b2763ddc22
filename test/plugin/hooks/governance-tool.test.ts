import { describe, expect, test } from "vitest";
import { CORE_LINE, HOST_LINES, type HostLine } from "../../../governance/host/host-lines.ts";
import { runGovernanceTool } from "../../../plugin/hooks/governance-tool.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { toolAfter, toolBefore } from "../../../plugin/opencode-1/tool-calls.ts";
import { CHILD, events, type PluginFixture, pluginFixtureEach, ROOT } from "../fixture.ts";

let f: PluginFixture;
pluginFixtureEach(async (made) => {
  f = made;
  await onEvent(f.rt, events.created(ROOT));
  await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
  // The record keeps the core's name of the shell tool, whatever the host called it.
  const call = { tool: HOST_LINES[CORE_LINE].shellTool, sessionID: CHILD, callID: "call_1" };
  await toolBefore(f.rt, call, { args: { command: "ls -la" } });
  await toolAfter(f.rt, call, { title: "ls -la", output: "", metadata: {} });
  await f.rt.flush(); // the listing reads the records on disk
});

describe("the governance tool's `sessions` listing names tools as the model's host offers them", () => {
  test("OpenCode 2: the child's last call reads `shell`, never the record's `bash`; OpenCode 1 keeps `bash`", async () => {
    const list = (hostLine?: HostLine) =>
      runGovernanceTool(f.rt.ctx, async () => undefined, { action: "sessions" }, { sessionID: ROOT, agent: "build", hostLine });
    const v2 = await list(2);
    expect(v2).toContain(`last: ${HOST_LINES[2].shellTool} ls -la`);
    expect(v2).not.toContain(HOST_LINES[1].shellTool);
    expect(await list()).toContain(`last: ${HOST_LINES[1].shellTool} ls -la`);
  });
});
