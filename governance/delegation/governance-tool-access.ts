import type { GovernanceConfig } from "../config/config.ts";
import { roleOf } from "./delegation-policy.ts";

/**
 * Who may use the governance tool (list, stop, steer sessions): the agents a user talks to. A subagent (OpenCode 1: an
 * agent of mode `subagent` or a built-in subagent; OpenCode 2: a session with a parent) and an agent the config names a
 * LEAF are not offered it, so its schema is not sent on each of their requests and no worker steers its own tree. Each
 * host adapter only says whether the agent is a subagent there and hides the tool its own way (OpenCode 1: a `deny`
 * permission from the `config` hook; OpenCode 2: the entry removed from the request's `tools`).
 */
export function mayUseGovernanceTool(agent: { name: string; subagent: boolean }, config: Pick<GovernanceConfig, "agents" | "defaultRole">): boolean {
  if (agent.subagent) return false;
  // Only a leaf the config names: the default role decides nothing here (an unknown primary keeps the tool).
  return !(Object.hasOwn(config.agents, agent.name) && roleOf(agent.name, config).role === "leaf");
}
