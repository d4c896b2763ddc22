import type { AgentRole, GovernanceConfig } from "../config/config.ts";
import { levelOf } from "../session/session-record.ts";
import { roleOf } from "./delegation-policy.ts";

/**
 * Who an agent is, as every text states it: the prefix, the task context block, the post-compaction reminder and the
 * compaction context all take this one view, so no two texts can disagree within a request (they did: a `general`
 * subagent was told LEAF by the prefix and DELEGATING by the reminder after a compaction).
 */
export interface AgentView {
  agent: string | null;
  role: AgentRole;
  /** Seed 003 level (1 primary, 2 first delegation, 3 deeper), from {@link levelOf}. */
  level: number;
  /** Exact parentID-chain length; 0 for a root session. */
  depth: number;
  maxDepth: number;
  /** The allow-list the texts state; empty when the agent cannot delegate. */
  mayDelegateTo: readonly string[];
}

/** What the host says about its agents (learned by the adapter from the host's config). */
export interface HostAgents {
  /** True when the host offers the agent no `task` tool: it cannot delegate, whatever its policy says. */
  lacksTask(agent: string): boolean;
}

/** A host that offers `task` to every agent (a CLI, a test). */
export const EVERY_AGENT_DELEGATES: HostAgents = { lacksTask: () => false };

/**
 * The one view of "who this agent is". The role is the policy's ({@link roleOf}), except that a delegating agent the
 * host offers no `task` tool is a LEAF: the texts must not promise a tool the model does not have. Pure.
 */
export function agentView(
  who: { agent: string | null | undefined; depth: number },
  config: Pick<GovernanceConfig, "agents" | "defaultRole" | "delegation">,
  host: HostAgents = EVERY_AGENT_DELEGATES,
): AgentView {
  const agent = who.agent ?? null;
  const policy = roleOf(agent, config);
  const cannotDelegate = policy.role === "delegating" && agent !== null && host.lacksTask(agent);
  return {
    agent,
    role: cannotDelegate ? "leaf" : policy.role,
    level: levelOf(who.depth),
    depth: who.depth,
    maxDepth: config.delegation.maxDepth,
    mayDelegateTo: cannotDelegate ? [] : policy.mayDelegateTo,
  };
}
