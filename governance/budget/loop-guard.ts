import { LOOP_STOP_PREFIX } from "../session/stop-origin.ts";
import type { LoopConfig } from "../config/budget-config.ts";
import { digest, normaliseArgs, pollByArgs } from "./loop-normalise.ts";
import { readOutput, type SlotTrend, stepTrends } from "./loop-progress.ts";

/** A loop guard's stop request ids start with this (session/stop-origin.ts tells its abort from the user's Escape by it). */
export { LOOP_STOP_PREFIX };

/**
 * Loop guards as a pure step over a small per-session state (kept in memory by the plugin; O(window) per call, the
 * window at most 200 short digests, each with the trends of at most 16 numbers). docs/budgets.md states the rules.
 *
 * "No progress" = the same call AND the same result, both normalised (loop-normalise.ts: paths, the `description`
 * field), so cosmetic variations do not hide a loop. Results are the same when their text is the same with numbers,
 * timestamps and ids masked, unless a number moved as progress (loop-progress.ts: a byte count or a clock that
 * grows, a count that falls — not a call counter, not a duration or random number that jumps up and down). Shapes:
 * - repeat: the same observation `repeat` times in a row (OpenCode's own doom_loop threshold is 3 identical calls);
 * - cycle: a short sequence of 2 to {@link MAX_CYCLE} different calls (A-B, A-B-C, …) repeated `pingPong` times;
 * - poll: a call that waits — it sleeps, asks for a status, itself took `pollWait` or more, or came `pollGap` or
 *   more after the previous result — is judged on its exact output and only after `pollRepeat` unchanged results:
 *   waiting for a build is not a model repeating itself, but a wait that never changes anything still is.
 * The first time a shape is reached the verdict is `notice` (a fenced note on that tool result); after `stopAfter`
 * more looping calls, `stop` (the stop ladder starts), once. Any call that breaks the pattern resets the guard.
 */
export const MAX_CYCLE = 4;

/** One tool call as the guard sees it: what was called, what came back, and when. */
export type LoopCall = { tool: string; args: unknown; output: string; startedAt: number; endedAt: number };

/** The call half, computed at `tool.execute.before` (arguments are not kept, only digests). */
export type LoopCallKey = { tool: string; key: string; poll: boolean; startedAt: number };

/**
 * One observation. `progress`: its numbers moved as progress since the previous observation with the same key, so it
 * is not a repetition of it. `trends` (non-polls only): what the next observation with this key is judged against.
 */
type Seen = { key: string; poll: boolean; progress: boolean; trends?: readonly SlotTrend[] };

export type LoopState = {
  /** The last observations, newest last, at most {@link windowSize} of them. */
  history: readonly Seen[];
  /** When the previous call's result came back (for the gap between calls). */
  lastEndedAt: number | null;
  noticed: boolean;
  sinceNotice: number;
  stopped: boolean;
};

export const NEW_LOOP_STATE: LoopState = { history: [], lastEndedAt: null, noticed: false, sinceNotice: 0, stopped: false };

export type LoopShape = "repeat" | "ping-pong" | "cycle" | "poll";
export type LoopVerdict = { kind: "none" } | { kind: "notice" | "stop"; shape: LoopShape; count: number; period: number };

/** The call's key: tool and normalised arguments; `poll` when its arguments say it waits or asks for a status. */
export function loopCallKey(tool: string, args: unknown, startedAt: number, cwd?: string): LoopCallKey {
  return { tool, key: `${tool}\0${digest(normaliseArgs(args, cwd))}`, poll: pollByArgs(tool, args), startedAt };
}

function windowSize(c: LoopConfig): number {
  return Math.min(200, Math.max(c.repeat, c.pollRepeat, MAX_CYCLE * c.pingPong, MAX_CYCLE * Math.ceil(c.pollRepeat / 2)) + MAX_CYCLE);
}

/** Observes one finished call. */
export function observeCall(
  state: LoopState,
  call: LoopCallKey,
  result: { output: string; endedAt: number },
  config: LoopConfig,
): { next: LoopState; verdict: LoopVerdict } {
  const waited =
    call.poll || result.endedAt - call.startedAt >= config.pollWait || (state.lastEndedAt !== null && call.startedAt - state.lastEndedAt >= config.pollGap);
  let seen: Seen;
  if (waited) seen = { key: `${call.key}\0=${digest(result.output)}`, poll: true, progress: false };
  else {
    const { shape, readings } = readOutput(result.output);
    const key = `${call.key}\0~${digest(shape)}`;
    const { trends, progress } = stepTrends(lastWith(state.history, key)?.trends, readings);
    seen = { key, poll: false, progress, trends };
  }
  const history = [...state.history, seen].slice(-windowSize(config));
  const base = { history, lastEndedAt: result.endedAt };
  if (!config.enabled) return { next: { ...state, ...base }, verdict: { kind: "none" } };
  const found = findLoop(history, config);
  if (!found) return { next: { ...base, noticed: false, sinceNotice: 0, stopped: false }, verdict: { kind: "none" } };
  if (!state.noticed) return { next: { ...base, noticed: true, sinceNotice: 0, stopped: false }, verdict: { kind: "notice", ...found } };
  const sinceNotice = state.sinceNotice + 1;
  if (state.stopped || sinceNotice < config.stopAfter)
    return { next: { ...base, noticed: true, sinceNotice, stopped: state.stopped }, verdict: { kind: "none" } };
  return { next: { ...base, noticed: true, sinceNotice, stopped: true }, verdict: { kind: "stop", ...found } };
}

function lastWith(history: readonly Seen[], key: string): Seen | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]?.key === key) return history[i];
  return undefined;
}

/** The shortest period whose repetition at the end of the history reaches its threshold. */
function findLoop(h: readonly Seen[], c: LoopConfig): { shape: LoopShape; count: number; period: number } | null {
  for (let p = 1; p <= MAX_CYCLE; p++) {
    if (h.length < 2 * p) continue;
    let run = p;
    // h[i + p] repeats h[i] when both are the same call and result and h[i + p]'s numbers did not move as progress.
    for (let i = h.length - 1 - p; i >= 0 && h[i]?.key === h[i + p]?.key && !h[i + p]?.progress; i--) run++;
    if (run < 2 * p) continue;
    const block = h.slice(-p);
    // A-A-A-A is a repeat, not an A-A cycle: a period counts only when its calls differ.
    if (p > 1 && block.every((s) => s.key === block[0]?.key)) continue;
    const polls = h.slice(-run).every((s) => s.poll);
    const needed = polls ? (p === 1 ? c.pollRepeat : p * Math.ceil(c.pollRepeat / p)) : p === 1 ? c.repeat : p * c.pingPong;
    if (run >= needed) return { shape: polls ? "poll" : p === 1 ? "repeat" : p === 2 ? "ping-pong" : "cycle", count: run, period: p };
  }
  return null;
}
