import type { LoopConfig } from "../config/budget-config.ts";
import { audit, type Effect } from "../session/effects.ts";
import type { ControlStatus } from "../session/session-record.ts";
import { LOOP_STOP_PREFIX } from "../session/stop-origin.ts";
import { buildLoopNotice, loopStopReason } from "./budget-notices.ts";
import type { GovernanceStop } from "./budget-step.ts";
import { type LoopCallKey, type LoopState, loopCallKey, NEW_LOOP_STATE, observeCall } from "./loop-guard.ts";

/** A call's loop key when loop guards are on (taken at `tool.execute.before`, matched at `after`); none when off. */
export function loopKeyFor(config: LoopConfig, call: { tool: string; args: unknown; at: number; cwd?: string }): LoopCallKey | undefined {
  return config.enabled ? loopCallKey(call.tool, call.args, call.at, call.cwd) : undefined;
}

export interface LoopWatch {
  /** The session's loop memory after this call; undefined when the guard did not look (nothing to keep). */
  next: LoopState | undefined;
  effects: Effect[];
  /** The notice for this very tool result, or null. */
  notice: string | null;
  /** The stop the loop guard starts (its L1 rides on this very result), or null. */
  stop: GovernanceStop | null;
}

/**
 * One finished tool call through the loop guard (loop-guard.ts `observeCall`). Only a session at work is watched
 * (`control: active`): a session being stopped is told by the ladder, and a call whose start was not keyed (guards off
 * when it began) is not counted. A notice or a stop is audited `loop_detected`.
 */
export function watchLoop(
  state: LoopState | undefined,
  input: { control: ControlStatus | undefined; call: LoopCallKey | undefined; tool: string; output: string; at: number },
  config: LoopConfig,
): LoopWatch {
  if (!input.call || input.control !== "active") return { next: state, effects: [], notice: null, stop: null };
  const { next, verdict } = observeCall(state ?? NEW_LOOP_STATE, input.call, { output: input.output, endedAt: input.at }, config);
  if (verdict.kind === "none") return { next, effects: [], notice: null, stop: null };
  const { shape, count, period } = verdict;
  const effects = [audit("loop_detected", { tool: input.tool, shape, count, period, stage: verdict.kind })];
  if (verdict.kind === "notice") return { next, effects, notice: buildLoopNotice(shape, count, input.tool, period), stop: null };
  return { next, effects, notice: null, stop: { id: `${LOOP_STOP_PREFIX}${shape}-${input.at}`, reason: loopStopReason(shape, count, period) } };
}
