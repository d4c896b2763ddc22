import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import { onToolBefore } from "../../governance/stop/stop-ladder.ts";
import { surfaceNamed, surfaceRefusal } from "../../governance/stop/control-surface.ts";
import { stopOrigin } from "../../governance/session/stop-origin.ts";
import { buildStopDirective } from "../../governance/texts/stop-directives.ts";
import { enrichTaskPrompt } from "../../governance/texts/task-context-block.ts";
import { toolCallSummary } from "../../governance/session/tool-call-summary.ts";
import { GovernanceBlock } from "../runtime/contain.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * A tool call about to run, in the plugin's own words; each adapter builds it from its host's hook
 * (plugin/opencode-1/tool-calls.ts, plugin/opencode-2/tool-calls.ts). `tool` is the core's name (`coreToolName` of
 * governance/host/host-lines.ts: `task`, `bash`, …); `args` the host's argument object, only read; `spawn` is set
 * when the call creates a child session: the target agent, the prompt it will run and its description.
 */
export type ToolCall = {
  sessionId: string;
  callId: string;
  tool: string;
  args: Record<string, unknown> | undefined;
  spawn?: { agent: string; prompt?: string; description?: string };
};

/**
 * A tool call to gate: records the call (S3), refuses every call of a stopped session (L3), and gates spawns:
 * a leaf caller, a target outside the caller's allow-list, or a child beyond the max depth is blocked by throwing a
 * message written for the model (the host returns it as the tool result). A governed session's call that names
 * governance's key, state folder or CLI is refused and audited `control_refused` (governance/stop/control-surface.ts).
 * An allowed spawn answers the prompt the child runs with (the governance context block in front of it), which the
 * adapter writes back into its host's arguments.
 */
export async function gateToolCall(rt: Runtime, call: ToolCall): Promise<{ prompt?: string }> {
  const { ctx, tracker, runner } = rt;
  const { sessionId, callId, tool, args, spawn } = call;
  const seen = await tracker.ensureSeen(sessionId);
  // The caller's role, for the first-action check of its first call (only read while it has made none).
  const current = rt.sessions.peek(sessionId) ?? seen;
  const role = current && current.firstTool === null ? ctx.viewOf(current.agent, current.depth).role : undefined;
  // The core's vocabulary names a spawn's target `subagent_type` (OpenCode 1's, host-lines.ts), whatever the host calls it.
  const summary = toolCallSummary(tool, spawn ? { subagent_type: spawn.agent, description: spawn.description } : args);
  const event = { type: "tool_before", at: ctx.clock.now(), tool, callId, summary, ...(role ? { role } : {}) } as const;
  const record = await runner.dispatch(sessionId, event, { soft: true });
  if (!record) return {};
  rt.stops.onLife(sessionId);

  const stop = onToolBefore(record, tool);
  if (stop.block) {
    await runner.run(sessionId, stop.effects, { next: record });
    throw new GovernanceBlock(
      buildStopDirective({ level: 3, sessionId, seal: rt.ctx.sealOf(sessionId), reason: record.stop?.reason ?? "", origin: stopOrigin(record.stop) }),
    );
  }
  // A governed session's tools never reach governance's key, state folder or CLI (issue 27): O(length of the arguments).
  const hit = ctx.guarded(record) ? surfaceNamed(tool, args, ctx.surfaces) : undefined;
  if (hit) {
    await ctx.record("control_refused", { sessionId, via: "tool", tool, surface: hit.surface, agent: record.agent, parentId: record.parentId });
    throw new GovernanceBlock(surfaceRefusal(hit, { agent: record.agent, subagent: record.parentId !== null }));
  }
  await rt.budget.onToolCall(sessionId, record, tool, callId, args);
  if (!spawn) return {};

  const targetAgent = spawn.agent;
  const { decision } = await runner.step(sessionId, (r) => decideSpawn(r, { targetAgent, config: ctx.config }));
  if (decision.kind !== "allowed") throw new GovernanceBlock(decision.message);
  const refusal = await rt.budget.running.check(sessionId, callId, targetAgent);
  if (refusal !== undefined) throw new GovernanceBlock(refusal);
  if (decision.note !== null) rt.calls.set(callId, decision.note);
  if (spawn.prompt === undefined) return {};
  const who = ctx.viewOf(targetAgent, decision.childDepth);
  return { prompt: enrichTaskPrompt(spawn.prompt, { parentSessionId: sessionId, parentAgent: record.agent, who, scope: spawn.description }) };
}
