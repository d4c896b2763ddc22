import type { AgentPolicy, AgentRole, GovernanceConfig } from "../config/config.ts";
import { levelOf, type SessionRecord } from "../session/session-record.ts";
import { type HostAgentSettings, PROJECT_CONFIG_SHOWN, suggestedEntry } from "../config/project-agents.ts";
import {
  buildHaltMessage,
  buildLeafBlockedMessage,
  buildNotNamedMessage,
  buildNotAllowedMessage,
  buildNotOwnSubagentMessage,
  buildStoppedSubagentMessage,
} from "./delegation-messages.ts";

/**
 * Who may spawn whom. Pure: config in, decision out. The adapter calls {@link checkSpawn} from
 * `tool.execute.before(task)` and, in enforce mode, throws the message of a refusal.
 */

type PolicyConfig = Pick<GovernanceConfig, "agents" | "defaultRole" | "delegation">;

/**
 * The policy of `agent`; an unknown or missing name gets `config.defaultRole` — by default a leaf, so a caller
 * governance does not know cannot spawn (decision 0024; OpenCode's built-ins are named in the shipped `agents`).
 * Own keys only: an agent named "constructor" must not resolve to Object.prototype.
 */
export function roleOf(agent: string | null | undefined, config: Pick<GovernanceConfig, "agents" | "defaultRole">): AgentPolicy {
  if (agent && Object.hasOwn(config.agents, agent)) {
    const policy = config.agents[agent];
    if (policy) return policy;
  }
  return config.defaultRole;
}

export { levelOf } from "../session/session-record.ts";

export { isTargetAllowed, matchesGlob } from "../config/target-lists.ts";
import { isTargetAllowed } from "../config/target-lists.ts";

export type SpawnRefusal = "leaf" | "not_named" | "not_allowed" | "max_depth" | "not_own_subagent" | "stopped_subagent";

/**
 * The session a `task` call with `task_id` would continue (OpenCode 1 continues ANY session of the project it is
 * given, under the target agent, with no check of its own): `parentId` as the host reports it — `undefined` when the
 * host knows no such session (it then creates a new one) —, and governance's control over it when it has a record.
 */
export type ContinuedSession = { sessionId: string; parentId: string | null | undefined; control: SessionRecord["control"] | null };

/**
 * What a `task_id` continues, from what the host reports (`host`: the session's parent, or `undefined` when the host
 * gave nothing — it does not know the session, or did not answer) and governance's record of it. The host is the
 * authority on parentage; the record decides only when the host gives nothing (decision 0029). A session OpenCode
 * deleted (governance saw `session.deleted`) that the host no longer reports is gone: OpenCode creates a new session
 * for the call, so it is a plain spawn (`undefined`) — a stop that ended it says nothing of the new one (decision
 * 0051). Any other stopped session the host gives nothing for stays refused: "unknown" and "no answer" look alike.
 */
export function continuationOf(
  sessionId: string,
  host: { parentId: string | null } | undefined,
  record: Pick<SessionRecord, "parentId" | "control" | "end"> | undefined,
): ContinuedSession | undefined {
  if (!host && record?.end?.how === "deleted") return undefined;
  return { sessionId, parentId: host ? host.parentId : record?.parentId, control: record?.control ?? null };
}

/** Where the child would stand; the same for an allowed and a refused spawn (a log-only refusal still spawns). */
export type SpawnPlacement = { childDepth: number; childLevel: number; targetRole: AgentRole };
/** A refusal; `add` (for `not_named`) holds the lines under `agents:` that would let the caller delegate. */
export type SpawnCheck = ({ ok: true } | { ok: false; kind: SpawnRefusal; message: string; add?: string[] }) & SpawnPlacement;

export interface SpawnRequest {
  /** The caller's session id: only its own subagents may be continued. */
  callerId?: string | null;
  callerAgent: string | null;
  /** The caller session's exact depth (parentID chain length; 0 for a root session). */
  callerDepth: number;
  targetAgent: string;
  /** Set for a `task_id` continuation. */
  continues?: ContinuedSession;
  config: PolicyConfig;
  /** What the host's own settings say of the caller's agent (OpenCode 1's `config` hook): the lines a refusal suggests. */
  callerHost?: HostAgentSettings;
}

/**
 * Decides a `task` spawn. Checks run most-specific first: a leaf caller (it may not delegate at all; one the config
 * does not name is told so, with the lines that would name it — decision 0030), then what a
 * `task_id` continues (only the caller's own subagent, and not one a stop ended), then the depth limit (the emergency
 * halt: child depth > `delegation.maxDepth`), then the caller's allow-list. Enforcement mode is not consulted here;
 * the adapter blocks or only logs (see `buildLogOnlyNote`).
 */
export function checkSpawn(request: SpawnRequest): SpawnCheck {
  const { callerAgent, callerDepth, targetAgent, config } = request;
  const caller = roleOf(callerAgent, config);
  const childDepth = callerDepth + 1;
  const at: SpawnPlacement = { childDepth, childLevel: levelOf(childDepth), targetRole: roleOf(targetAgent, config).role };
  const maxDepth = config.delegation.maxDepth;
  if (caller.role === "leaf") {
    if (callerAgent !== null && !Object.hasOwn(config.agents, callerAgent)) {
      const add = suggestedEntry(callerAgent, request.callerHost);
      const message = buildNotNamedMessage({ callerAgent, callerDepth, targetAgent, configFile: PROJECT_CONFIG_SHOWN, add });
      return { ok: false, kind: "not_named", ...at, message, add };
    }
    return { ok: false, kind: "leaf", ...at, message: buildLeafBlockedMessage({ callerAgent, callerDepth, targetAgent }) };
  }
  const continued = request.continues;
  // A caller governance cannot name owns no session: whatever the host knows is not its subagent.
  if (continued && continued.parentId !== undefined && (!request.callerId || continued.parentId !== request.callerId)) {
    return { ok: false, kind: "not_own_subagent", ...at, message: buildNotOwnSubagentMessage({ callerAgent, sessionId: continued.sessionId }) };
  }
  if (continued?.control === "stopped") {
    return { ok: false, kind: "stopped_subagent", ...at, message: buildStoppedSubagentMessage({ callerAgent, sessionId: continued.sessionId }) };
  }
  if (childDepth > maxDepth) {
    return { ok: false, kind: "max_depth", ...at, message: buildHaltMessage({ callerAgent, callerDepth, targetAgent, maxDepth }) };
  }
  if (!isTargetAllowed(caller.mayDelegateTo, targetAgent)) {
    return { ok: false, kind: "not_allowed", ...at, message: buildNotAllowedMessage({ callerAgent, callerDepth, targetAgent, allowed: caller.mayDelegateTo }) };
  }
  return { ok: true, ...at };
}
