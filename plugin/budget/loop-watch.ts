import { type LoopCallKey, type LoopState, type LoopVerdict, NEW_LOOP_STATE, observeCall } from "../../governance/budget/loop-guard.ts";
import type { PluginContext } from "../runtime/context.ts";

/**
 * One finished tool call through the loop guard (governance/budget/loop-guard.ts): the session's loop memory moves
 * on, and a notice or stop is audited `loop_detected`. The caller puts the notice on the result or starts the stop.
 */
export async function watchLoop(
  ctx: PluginContext,
  loops: Map<string, LoopState>,
  sessionId: string,
  tool: string,
  call: LoopCallKey,
  output: string,
): Promise<LoopVerdict> {
  const { next, verdict } = observeCall(loops.get(sessionId) ?? NEW_LOOP_STATE, call, { output, endedAt: ctx.clock.now() }, ctx.config.loops);
  loops.set(sessionId, next);
  if (verdict.kind !== "none")
    await ctx.record("loop_detected", { sessionId, tool, shape: verdict.shape, count: verdict.count, period: verdict.period, stage: verdict.kind });
  return verdict;
}
