import { afterEach, describe, expect, test } from "vitest";
import { AGENT_PROJECT_ENV, AGENT_SESSION_ENV } from "../../../governance/stop/agent-shell.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { shellEnv } from "../../../plugin/hooks/shell-env.ts";
import { toolBefore } from "../../../plugin/opencode-1/tool-calls.ts";
import { events, type PluginFixture, pluginFixture, ROOT, CHILD } from "../fixture.ts";

let f: PluginFixture;
async function start(userConfig?: string): Promise<void> {
  f = await pluginFixture(userConfig === undefined ? {} : { userConfig });
  await onEvent(f.rt, events.created(ROOT));
  await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
}
afterEach(() => f?.close());

const env = async (sessionID: string) => {
  const output = { env: {} as Record<string, string> };
  Object.assign(output.env, await shellEnv(f.rt, sessionID));
  return output.env;
};
// As the host calls it: `await` of what the hook answers (a promise, or nothing when it had nothing to wait for).
const cliCall = async (sessionID: string) =>
  await toolBefore(f.rt, { tool: "bash", sessionID, callID: `c-${Math.random()}` }, { args: { command: "opencode-governance stop ses_x", description: "x" } });

describe("who is guarded (issue 27)", () => {
  test("a subagent's shells are marked and its CLI call refused; a root's are not", async () => {
    await start();
    expect(await env(CHILD)).toEqual({ [AGENT_SESSION_ENV]: CHILD, [AGENT_PROJECT_ENV]: f.rt.ctx.directory });
    expect(await env(ROOT)).toEqual({});
    await expect(cliCall(CHILD)).rejects.toThrow(/^Refused by governance/);
    await expect(cliCall(ROOT)).resolves.toBeUndefined();
    expect(await f.audit("control_refused")).toMatchObject([{ sessionId: CHILD, via: "tool", surface: "cli", parentId: ROOT }]);
  });

  test("a root too when the user's own config says guard.rootSessions: true", async () => {
    await start("guard:\n  rootSessions: true\n");
    expect(await env(ROOT)).toMatchObject({ [AGENT_SESSION_ENV]: ROOT });
    await expect(cliCall(ROOT)).rejects.toThrow(/^Refused by governance: .*Ask the user/);
  });
});
