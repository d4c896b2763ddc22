import { closeChild } from "./child-links.ts";
import { confirmStopped } from "./stopped.ts";
import { audit, type Step } from "./effects.ts";
import { isRunningChild, isRunningSession, sessionStatus } from "./running.ts";
import type { SessionHost, SessionRecord } from "./session-record.ts";

/**
 * An ordinary exit is not a crash (issue 26 item 1, CONVENTIONS 16). Every exit path the plugin sees (`dispose` at
 * the end of `opencode run` or a TUI quit, SIGTERM/SIGINT/SIGHUP to `opencode serve`) releases each session this
 * process hosts, with its final state, so that a later process's crash recovery (crash-recovery.ts) never takes it
 * for one a dead process left behind:
 * - `hostedBy` is cleared: nobody runs it now, and nobody died running it;
 * - a session idle between turns, interrupted, stopped or ended keeps its state (an idle or interrupted root stays
 *   resumable: `resume`, the dashboard, `opencode -s`);
 * - a turn still under way is cut off by the exit: the session is `interrupted`, like an Escape, and resumable;
 * - a stop in progress is final: the process ending stopped the work (`stopped`, the parent told once — the note
 *   waits in its queue for the process that hosts the parent next).
 * Audited `session_released` with what it was and what it is now; never counted as an Escape.
 */
export function releaseOnExit(record: SessionRecord | undefined, host: SessionHost, at: number, opts: { busy?: boolean } = {}): Step {
  if (!record || !sameHost(record.hostedBy, host)) return { next: record, effects: [] };
  const was = sessionStatus(record);
  const running = !record.end && (record.control === "active" || record.control === "stopping") && (isRunningSession(record) || opts.busy === true);
  let next: SessionRecord = { ...record, hostedBy: null, updatedAt: Math.max(record.updatedAt, at) };
  if (running && next.state !== "interrupted") {
    next = { ...next, state: "interrupted", interruptedAt: at, stateBeforeInterrupt: record.state, lastActivityAt: Math.max(record.lastActivityAt, at) };
  }
  const effects: Step["effects"] = [];
  if (next.control === "stopping") {
    const stopped = confirmStopped(next, at, "hard-stop");
    next = stopped.next;
    effects.push(...stopped.effects);
  }
  effects.push(audit("session_released", { cause: "exit", was, now: sessionStatus(next), cutOff: running }));
  return { next, effects };
}

/**
 * The parent's side of a child cut off by the exit: its link is closed `aborted` (the task did not return), so no
 * slot and no "running" child outlives the process.
 */
export function closeLinkOnExit(parent: SessionRecord | undefined, childId: string, at: number): Step {
  const link = parent?.children.find((c) => c.sessionId === childId);
  if (!parent || !link || !isRunningChild(link)) return { next: parent, effects: [] };
  return closeChild(parent, childId, "aborted", at);
}

function sameHost(a: SessionHost | null | undefined, b: SessionHost): boolean {
  return a !== null && a !== undefined && a.host === b.host && a.pid === b.pid && a.start === b.start;
}
