import { mayUseGovernanceTool } from "../../governance/delegation/governance-tool-access.ts";
import { readOpencodeAgents } from "../../governance/config/opencode-agents.ts";
import type { HostAgentSettings } from "../../governance/config/project-agents.ts";
import { HOST_LINES, hostDepthNeeded } from "../../governance/host/host-lines.ts";
import type { PluginContext } from "../runtime/context.ts";
import { GOVERNANCE_TOOL_NAME } from "../hooks/governance-tool.ts";

/** The tool governance-tool.ts registers; its schema rides on every model request of every agent offered it. */
export const GOVERNANCE_TOOL_NAMES = [GOVERNANCE_TOOL_NAME] as const;

/**
 * OpenCode 1.18's built-in subagents. Neither is offered the `task` tool unless the project's own config sets a
 * `task` permission for it (observed: the scripted model's tool list for a `general` child has no `task`).
 */
const BUILTIN_SUBAGENTS = new Set(["general", "explore"]);

type AgentEntry = { mode?: unknown; permission?: unknown; [k: string]: unknown };

function permissionOf(entry: AgentEntry | undefined): Record<string, unknown> | string | undefined {
  const p = entry?.permission;
  return typeof p === "string" || (p && typeof p === "object" && !Array.isArray(p)) ? (p as Record<string, unknown> | string) : undefined;
}

/** True when the host will not offer `task` to the agent: denied outright, or a built-in subagent left as shipped. */
function lacksTask(name: string, entry: AgentEntry | undefined): boolean {
  const p = permissionOf(entry);
  if (p === "deny") return true;
  if (typeof p === "object") {
    const task = p.task;
    if (task === "deny") return true;
    if (task !== undefined) return false;
  }
  return BUILTIN_SUBAGENTS.has(name);
}

/**
 * OpenCode 1's host facts, from its `config` hook (plugin/opencode-2/host-facts.ts is OpenCode 2's). The depth limit, the governance tool hidden from subagents, and the agents
 * offered no delegation tool:
 *
 * 1. OpenCode 1.18 refuses a subagent's own `task` call unless `subagent_depth` allows it (default 1), which would make
 *    the configured hierarchy impossible and the refusal opaque. Raise it to the governed max depth so governance
 *    decides (and explains) instead; a user's higher setting is kept.
 * 2. The governance tool (list, stop, steer sessions) is for the agents a user talks to. Subagents (mode
 *    `subagent`, and the built-in general/explore) and governance leaves get an OpenCode `deny` permission for it,
 *    so the host does not offer it and its schema is not sent on every one of their requests. A permission the
 *    project set for it is kept.
 * 3. Agents the host offers no `task` tool are noted, so the texts do not call them DELEGATING (`PluginContext.viewOf`,
 *    over the core's `agentView`).
 * 4. The project's own agents, as the host configured them (before 2. adds its permissions): kept for the refusal of
 *    an agent the config does not name, and — on the start that generated governance.yaml — named in it with the
 *    role their settings give them, so agents that delegated before governance keep delegating (decision 0030).
 */
export async function configHook(gov: PluginContext, config: Record<string, unknown>): Promise<void> {
  const { depthKey, depthDefault } = HOST_LINES[1];
  const key = depthKey[0] as string;
  const needed = hostDepthNeeded(gov.config.delegation.maxDepth);
  const current = typeof config[key] === "number" ? (config[key] as number) : depthDefault;
  // One more than governance's limit: the attempt beyond the limit must reach our gate, which halts it with an explanation.
  if (current < needed) {
    config[key] = needed;
    await gov.record("host_limit_raised", { setting: key, from: current, to: needed });
  }
  await learnAgents(gov, config);
  restrictGovernanceTools(gov, config);
}

async function learnAgents(gov: PluginContext, config: Record<string, unknown>): Promise<void> {
  const agents = config.agent && typeof config.agent === "object" ? (config.agent as Record<string, AgentEntry | undefined>) : {};
  const files = new Map((await readOpencodeAgents(gov.directory)).map((a) => [a.name, a.source]));
  const settings: HostAgentSettings[] = [];
  for (const [name, entry] of Object.entries(agents)) {
    if (!entry || typeof entry !== "object" || entry.disable === true) continue;
    const a = { name, mode: entry.mode, permission: entry.permission, tools: entry.tools, source: files.get(name) ?? "OpenCode's config" };
    settings.push(a);
    gov.hostAgents.set(name, a);
  }
  const named = await gov.configWatcher.nameAgents(settings);
  if (named.length > 0) await gov.record("config_agents_named", { file: gov.configWatcher.file, agents: named });
}

function restrictGovernanceTools(gov: PluginContext, config: Record<string, unknown>): void {
  if (!config.agent || typeof config.agent !== "object") config.agent = {};
  const agents = config.agent as Record<string, AgentEntry | undefined>;
  const names = new Set([...Object.keys(agents), ...BUILTIN_SUBAGENTS]);
  for (const name of names) {
    const entry = agents[name];
    if (entry !== undefined && (typeof entry !== "object" || entry === null)) continue;
    if (lacksTask(name, entry)) gov.agentsWithoutTask.add(name);
    const subagent = entry?.mode === "subagent" || (entry?.mode === undefined && BUILTIN_SUBAGENTS.has(name));
    if (mayUseGovernanceTool({ name, subagent }, gov.config)) continue;
    const p = permissionOf(entry);
    const permission: Record<string, unknown> = typeof p === "string" ? { "*": p } : { ...p };
    for (const tool of GOVERNANCE_TOOL_NAMES) if (!(tool in permission)) permission[tool] = "deny";
    agents[name] = { ...entry, permission };
  }
}
