import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { readOpencodeAgents } from "../../governance/config/opencode-agents.ts";
import { mayUseGovernanceTool } from "../../governance/delegation/governance-tool-access.ts";
import { GOVERNANCE_TOOL_NAME } from "../hooks/governance-tool.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { SessionContextEvent } from "./types.ts";

/**
 * OpenCode 2's host facts, from what its released plugin API offers (plugin/opencode-1/host-facts.ts is OpenCode 1's,
 * from the `config` hook, which OpenCode 2 does not have). Read on every agent-loop request (`context` hook), before
 * the prefix is built:
 *
 * - Agents offered no delegation tool: the request's `tools` are what the host offers this agent on this step (in
 *   packages/core/src/session/model-request.ts @ 605708ad the request's tools are the hook's `tools` entries
 *   afterwards; subagent.ts's own hook skips an agent its permissions deny `subagent`). No `subagent` there → the
 *   agent is noted as one the texts do not call DELEGATING; offered again → no longer noted.
 * - The governance tool hidden from subagents: removed from the request's `tools` of a subagent and of a governance
 *   leaf (the host drops an entry a hook removed: same file), so its schema is not sent on their requests.
 * - The project's own agents (docs/decisions/0030-project-agents-named.md): the release line reports an agent's name
 *   and tools per request, never its mode or permissions, and has no `config` hook. So, like `init`, the adapter
 *   reads the agent files OpenCode reads (`learnAgents`, at start): they are named in the governance.yaml this start
 *   generated, and a refusal of an agent not named gives the lines from them.
 * - The depth limit: nothing. The release line has no `config` hook and no plugin API to raise
 *   `experimental.subagent_depth`; `init` writes it (max depth + 1) and `doctor` warns when it is missing
 *   (docs/opencode-2.md).
 */
export function applyHostFacts(rt: Runtime, e: SessionContextEvent): void {
  const agents = rt.ctx.agentsWithoutTask;
  if (Object.hasOwn(e.tools, HOST_LINES[2].delegateTool)) agents.delete(e.agent);
  else agents.add(e.agent);
  if (!Object.hasOwn(e.tools, GOVERNANCE_TOOL_NAME)) return;
  const subagent = (rt.sessions.peek(e.sessionID)?.parentId ?? null) !== null;
  if (!mayUseGovernanceTool({ name: e.agent, subagent }, rt.ctx.config)) delete e.tools[GOVERNANCE_TOOL_NAME];
}

/** At start: the project's own agents from OpenCode's files, named in a governance.yaml this start generated. */
export async function learnAgents(rt: Runtime): Promise<void> {
  const agents = await readOpencodeAgents(rt.ctx.directory);
  for (const a of agents) rt.ctx.hostAgents.set(a.name, a);
  const named = await rt.ctx.configWatcher.nameAgents(agents);
  if (named.length > 0) await rt.ctx.record("config_agents_named", { file: rt.ctx.configWatcher.file, agents: named });
}
