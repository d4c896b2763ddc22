import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import { onToolBefore } from "../../governance/stop/stop-ladder.ts";
import { surfaceNamed, surfaceRefusal } from "../../governance/stop/control-surface.ts";
import { stopOrigin } from "../../governance/session/stop-origin.ts";
import { buildStopDirective } from "../../governance/texts/stop-directives.ts";
import { enrichTaskPrompt } from "../../governance/texts/task-context-block.ts";
import { toolCallSummary } from "../../governance/session/tool-call-summary.ts";
import { GovernanceBlock } from "../runtime/contain.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** Tools that create a session. `task` is OpenCode's; the list is here so another spawner is one line away. */
const SPAWNING_TOOLS = new Set(["task"]);

/**
 * A tool's arguments: an object (OpenCode validates the fields after this hook; governance reads a few, each checked
 * where it is read). A type check, not a schema parse: this runs on every tool call.
 */
function toolArgs(args: unknown): Record<string, unknown> | undefined {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
}

/**
 * `tool.execute.before`: records the call (S3), refuses every call of a stopped session (L3), and gates spawns:
 * a leaf caller, a target outside the caller's allow-list, or a child beyond the max depth is blocked by throwing a
 * message written for the model (OpenCode returns it as the tool result). An allowed spawn gets the governance
 * context block in its prompt. A governed session's call that names governance's key, state folder or CLI is refused
 * and audited `control_refused` (governance/stop/control-surface.ts).
 */
export async function toolBefore(rt: Runtime, input: { tool: string; sessionID: string; callID: string }, output: { args: unknown }): Promise<void> {
  const { ctx, tracker, runner } = rt;
  const sessionId = input.sessionID;
  const args = toolArgs(output.args);
  const seen = await tracker.ensureSeen(sessionId);
  // The caller's role, for the first-action check of its first call (only read while it has made none).
  const current = rt.sessions.peek(sessionId) ?? seen;
  const role = current && current.firstTool === null ? ctx.viewOf(current.agent, current.depth).role : undefined;
  const summary = toolCallSummary(input.tool, args);
  const event = { type: "tool_before", at: ctx.clock.now(), tool: input.tool, callId: input.callID, summary, ...(role ? { role } : {}) } as const;
  const record = await runner.dispatch(sessionId, event, { soft: true });
  if (!record) return;
  rt.stops.onLife(sessionId);

  const stop = onToolBefore(record, input.tool);
  if (stop.block) {
    await runner.run(sessionId, stop.effects, { next: record });
    throw new GovernanceBlock(
      buildStopDirective({ level: 3, sessionId, seal: rt.ctx.sealOf(sessionId), reason: record.stop?.reason ?? "", origin: stopOrigin(record.stop) }),
    );
  }
  // A governed session's tools never reach governance's key, state folder or CLI (issue 27): O(length of the arguments).
  const hit = ctx.guarded(record) ? surfaceNamed(input.tool, args, ctx.surfaces) : undefined;
  if (hit) {
    await ctx.record("control_refused", {
      sessionId,
      via: "tool",
      tool: input.tool,
      surface: hit.surface,
      agent: record.agent,
      parentId: record.parentId,
    });
    throw new GovernanceBlock(surfaceRefusal(hit, { agent: record.agent, subagent: record.parentId !== null }));
  }
  await rt.budget.onToolCall(sessionId, record, input.tool, input.callID, output.args);
  if (!SPAWNING_TOOLS.has(input.tool) || !args) return;

  const targetAgent = String(args.subagent_type ?? "general");
  const { decision } = await runner.step(sessionId, (r) => decideSpawn(r, { targetAgent, config: ctx.config }));
  if (decision.kind !== "allowed") throw new GovernanceBlock(decision.message);
  const refusal = await rt.budget.running.check(sessionId, input.callID, targetAgent);
  if (refusal !== undefined) throw new GovernanceBlock(refusal);
  if (decision.note !== null) rt.calls.set(input.callID, decision.note);
  if (typeof args.prompt === "string") {
    // OpenCode's own argument object: the task runs with the enriched prompt.
    args.prompt = enrichTaskPrompt(args.prompt, {
      parentSessionId: sessionId,
      parentAgent: record.agent,
      who: ctx.viewOf(targetAgent, decision.childDepth),
      scope: typeof args.description === "string" ? args.description : undefined,
    });
  }
}
