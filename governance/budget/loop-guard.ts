import { createHash } from "node:crypto";
import type { LoopConfig } from "./budget-config.ts";

/** A loop guard's stop request ids start with this (stop-ladder.ts tells its abort from the user's Escape by it). */
export const LOOP_STOP_PREFIX = "loop-";

/**
 * Loop guards as a pure step over a tiny per-session state (kept in memory by the plugin; O(1) per call).
 *
 * "No progress" = the same call (tool + arguments) AND the same result (a hash of the output). A poll whose output
 * changes (a build that is progressing) is a different observation each time and never trips the guard; the same
 * call returning the same thing again is a loop. Two shapes:
 * - repeat: the same observation `repeat` times in a row (OpenCode's own doom_loop threshold is 3 identical calls);
 * - ping-pong: A, B, A, B … with A ≠ B and both unchanged, for `pingPong` full cycles.
 * The first time a shape is reached the verdict is `notice` (a fenced note on that tool result); after `stopAfter`
 * more looping calls, `stop` (the stop ladder starts), once. Any call that breaks the pattern resets the guard.
 */
export type LoopState = {
  /** The last two observations, newest last. */
  last: string | null;
  beforeLast: string | null;
  repeat: number;
  /** Length of the current A-B-A-B run (2 = A then B). */
  alternating: number;
  noticed: boolean;
  sinceNotice: number;
  stopped: boolean;
};

export const NEW_LOOP_STATE: LoopState = { last: null, beforeLast: null, repeat: 0, alternating: 0, noticed: false, sinceNotice: 0, stopped: false };

export type LoopVerdict = { kind: "none" } | { kind: "notice" | "stop"; shape: "repeat" | "ping-pong"; count: number };

/** `observation` identifies call and result, e.g. `${tool}\0${hash(args)}\0${hash(output)}`. */
export function observeCall(state: LoopState, observation: string, config: LoopConfig): { next: LoopState; verdict: LoopVerdict } {
  const repeat = state.last === observation ? state.repeat + 1 : 1;
  let alternating = 1;
  if (state.last !== null && state.last !== observation) alternating = state.beforeLast === observation ? Math.max(state.alternating, 2) + 1 : 2;
  const base = { last: observation, beforeLast: state.last, repeat, alternating };
  if (!config.enabled) return { next: { ...state, ...base }, verdict: { kind: "none" } };
  const isRepeat = repeat >= config.repeat;
  const isPingPong = alternating >= 2 * config.pingPong;
  if (!isRepeat && !isPingPong) return { next: { ...base, noticed: false, sinceNotice: 0, stopped: false }, verdict: { kind: "none" } };
  const shape = isRepeat ? "repeat" : "ping-pong";
  const count = isRepeat ? repeat : alternating;
  if (!state.noticed) return { next: { ...base, noticed: true, sinceNotice: 0, stopped: false }, verdict: { kind: "notice", shape, count } };
  const sinceNotice = state.sinceNotice + 1;
  if (state.stopped || sinceNotice < config.stopAfter) {
    return { next: { ...base, noticed: true, sinceNotice, stopped: state.stopped }, verdict: { kind: "none" } };
  }
  return { next: { ...base, noticed: true, sinceNotice, stopped: true }, verdict: { kind: "stop", shape, count } };
}

/** A short digest of a text (arguments, tool output) for comparing observations; O(length), no copy kept. */
export function digest(text: string): string {
  return createHash("sha1").update(text).digest("base64");
}

/** The call half of an observation: tool and a digest of its arguments. */
export function callKey(tool: string, args: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(args) ?? "";
  } catch {
    json = String(args);
  }
  return `${tool}\0${digest(json)}`;
}
