import type { AgentRole } from "../config/config.ts";
import { agentToken, sessionToken } from "../text-safety/text-parts.ts";

/**
 * Who may steer (stop or inject into) a session — issue 8 §8. The local user (CLI, dashboard with its token) always
 * may; from inside OpenCode only a primary agent may, through the `governance` tool. A subagent (any session with a
 * parent) may not stop or inject into anything — its parent, its siblings, itself — because its arguments are what a
 * prompt injection in a file it read would control, and the hierarchy must not be turned against the user. A leaf
 * agent never steers. A caller this process has no record of is refused (fail closed).
 */
export type Steerer =
  | { kind: "user"; via: "cli" | "dashboard" }
  | { kind: "agent"; sessionId: string; agent: string | null; role: AgentRole; parentId: string | null; known: boolean };

export type SteerAction = "stop" | "inject";
export type SteerDecision = { ok: true } | { ok: false; reason: string };

export function maySteer(caller: Steerer, action: SteerAction): SteerDecision {
  if (caller.kind === "user") return { ok: true };
  const verb = action === "stop" ? "stop" : "send guidance to";
  if (!caller.known) {
    return { ok: false, reason: `Refused: session ${sessionToken(caller.sessionId)} is not known to governance yet, so it may not ${verb} other sessions.` };
  }
  if (caller.parentId !== null) {
    return {
      ok: false,
      reason:
        `Refused: ${agentToken(caller.agent)} is a subagent (its parent is ${sessionToken(caller.parentId)}); subagents may not ${verb} any session — ` +
        "not their parent, not their siblings, not themselves. Only the user or a primary agent can. Finish your task and report to your parent instead.",
    };
  }
  if (caller.role === "leaf") {
    return { ok: false, reason: `Refused: ${agentToken(caller.agent)} is a leaf agent and cannot ${verb} other sessions.` };
  }
  return { ok: true };
}
