import { roleOf } from "../../governance/delegation/delegation-policy.ts";
import type { HostLine } from "../../governance/host/host-lines.ts";
import { renderTree, requestInject, requestStop, type ControlContext } from "../../governance/stop/control-requests.ts";
import { maySteer, type SteerAction } from "../../governance/stop/steer-policy.ts";
import * as z from "../../governance/zod.ts";
import type { PluginContext } from "../runtime/context.ts";

/** The tool's name on both hosts (host-facts.ts of each adapter keeps it from subagents). */
export const GOVERNANCE_TOOL_NAME = "governance";

/**
 * What the model reads of the tool, with its arguments' schema, on every request of a primary agent: with the prefix it
 * must stay within 1 000 bytes (issue 31: 1.0 KB), so the arguments carry no descriptions of their own — this one line names
 * them all — and one free `text` serves as the guidance of `inject` and the reason of `stop`.
 */
export const GOVERNANCE_TOOL_DESCRIPTION =
  "List (sessions; all: +ended), stop (level 1 graceful, 2 now, 3 kill; text: reason) or guide (inject: text) a subagent; target: id/agent.";

/** The longest reason a stop may carry (the record keeps it; the CLI clips its own the same way). */
export const STOP_REASON_MAX = 500;

/**
 * The tool's input as JSON Schema, for OpenCode 2 (`tool.transform` refuses a zod built by another zod instance, and
 * JSON Schema needs no import). The same fields as `GOVERNANCE_TOOL_ARGS` below; test/plugin/opencode-2/opencode-2-mapping.test.ts
 * checks that both accept and refuse the same inputs.
 */
export const GOVERNANCE_TOOL_INPUT = {
  type: "object",
  properties: {
    action: { type: "string", enum: ["sessions", "stop", "inject"] },
    target: { type: "string" },
    level: { type: "integer", minimum: 1, maximum: 3 },
    text: { type: "string" },
    all: { type: "boolean" },
  },
  required: ["action"],
  additionalProperties: false,
} as const;

/** The tool's input as zod fields (OpenCode 1's `args`; OpenCode 2 parses its input with them again). */
const Args = {
  action: z.enum(["sessions", "stop", "inject"]),
  target: z.string().optional(),
  level: z.number().int().min(1).max(3).optional(),
  text: z.string().optional(),
  all: z.boolean().optional(),
};
export const GOVERNANCE_TOOL_ARGS = Args;
const ArgsObject = z.object(Args);
export type GovernanceToolArgs = z.infer<typeof ArgsObject>;

/**
 * The `governance` tool for a primary agent: list the governed sessions, stop or steer a running subagent. It writes
 * the same requests as the CLI (`opencode-governance stop|inject|sessions`). One tool with an `action`, not one per
 * action: OpenCode handles every offered tool on every model step of every agent (even one denied it), so each tool
 * costs the host CPU per step — measured in docs/performance.md. Host-neutral: each adapter registers it
 * its host's way (plugin/opencode-1/governance-tool.ts, plugin/opencode-2/governance-tool.ts) and calls this.
 */
export async function runGovernanceTool(
  gov: PluginContext,
  afterRequest: (sessionId: string) => Promise<void>,
  args: GovernanceToolArgs,
  /** `hostLine`: the host whose tool names the listing uses (records keep the core's; default the core's line). */
  context: { sessionID: string; agent: string; hostLine?: HostLine },
): Promise<string> {
  const ctx = (by: string): ControlContext => ({ paths: gov.paths, store: gov.store, audit: gov.audit, clock: gov.clock, by, trust: gov.trust });
  /** Only a primary agent's tool may steer (issue 8 §8); the rule is governance's, the record is the caller's own. */
  const refusal = async (context: { sessionID: string; agent: string }, action: SteerAction): Promise<string | undefined> => {
    const record = gov.store.peek(context.sessionID) ?? (await gov.store.read(context.sessionID));
    const agent = record?.agent ?? context.agent;
    const decision = maySteer(
      {
        kind: "agent",
        sessionId: context.sessionID,
        agent,
        role: roleOf(agent, gov.config).role,
        parentId: record?.parentId ?? null,
        known: record !== undefined && record !== null,
      },
      action,
    );
    if (decision.ok) return undefined;
    await gov.record("steer_refused", { sessionId: context.sessionID, action, agent, parentId: record?.parentId ?? null });
    return decision.reason;
  };
  if (args.action === "sessions") {
    const lines = renderTree(await gov.store.list(), { now: gov.clock.now(), all: args.all ?? false, trust: gov.trust, hostLine: context.hostLine });
    return lines.length > 0 ? lines.join("\n") : "No running governed sessions.";
  }
  if (!args.target) return `Nothing done: ${args.action} needs a target (a session id or agent name).`;
  const refused = await refusal(context, args.action);
  if (refused) return refused;
  const by = ctx(`agent:${context.agent}`);
  if (args.action === "stop") {
    const reason = args.text ?? "";
    if (reason.length > STOP_REASON_MAX) return `Not stopped: the reason (text) is longer than ${STOP_REASON_MAX} characters.`;
    const res = await requestStop(by, args.target, { level: (args.level ?? 1) as 1 | 2 | 3, reason });
    if (!res.ok) return `Not stopped: ${res.reason}`;
    for (const id of res.sessionIds) await afterRequest(id);
    return `Stop requested for ${res.sessionIds.join(", ")}.`;
  }
  if (!args.text) return "Not sent: inject needs the guidance as text.";
  const res = await requestInject(by, args.target, args.text, { maxLength: gov.config.inject.maxLength });
  if (!res.ok) return `Not sent: ${res.reason}`;
  for (const id of res.sessionIds) await afterRequest(id);
  return `Guidance queued for ${res.sessionIds.join(", ")}.${res.warnings.length ? ` Warnings: ${res.warnings.join("; ")}` : ""}`;
}
