import type { Anchor } from "../config/config.ts";
import type { SessionState } from "../session/session-record.ts";
import type { InterruptedWork } from "../delegation/descendants.ts";
import { formatIdle, formatTimeOfDay, formatTimestamp } from "../time/time-format.ts";
import { anchorLine, importantAnchors } from "./post-compact-reminder.ts";
import { agentToken, untrustedLine, sessionToken } from "../text-safety/text-parts.ts";

export type { InterruptedWork };

export const RESUME_HEADING = "## Resumed Session (opencode-governance)";

export interface ResumeContextInput {
  idleMs: number;
  previousActivityAt: number;
  previousState: SessionState;
  /** True when the session was interrupted (Escape / abort) rather than left idle. */
  interrupted: boolean;
  /** This session's unfinished descendants, parents before their children (tree order). At most 10 are shown. */
  interruptedWork: readonly InterruptedWork[];
  anchors: readonly Anchor[];
  todo: { total: number; open: number } | null;
  /** IANA zone for the readable times; default: the process zone. ISO times are always UTC. */
  timeZone?: string;
}

const STATE_TEXT: Record<SessionState, string> = {
  beginning: "it had just started",
  compacted: "its context had just been compacted",
  between_turn: "it was between turns",
  interrupted: "it was interrupted",
  resumed: "it had just been resumed",
};

/**
 * Where the session stood. Interrupted with a subagent cut off, its turn was waiting on that subagent's task (its own
 * state said "between turns" from its last model step on: the newcomer walk read that as idle).
 */
function previousState(input: ResumeContextInput): string {
  const waiting = input.interrupted && input.interruptedWork.length > 0 && input.previousState !== "compacted";
  return waiting ? "its turn was waiting on its subagent (a task still running)" : STATE_TEXT[input.previousState];
}

const MAX_WORK = 10;
const MAX_ANCHORS = 10;

function workLine(work: InterruptedWork, indent: number, timeZone: string | undefined): string {
  const call = work.lastToolCall;
  const last = call
    ? `last tool call \`${agentToken(call.tool)}\` ${untrustedLine(call.summary, 80)} at ${formatTimeOfDay(call.at, timeZone)}`
    : "no tool call yet";
  const head = `${agentToken(work.agent)} (${sessionToken(work.sessionId)}, depth ${work.depth}, ${agentToken(work.state)})`;
  return `${"  ".repeat(indent)}- ${head}: ${last}`;
}

/**
 * S5 resume context (S5-R01..R04), prepended before the governance prefix when a level-1 session comes back after
 * `resume.minIdle`. It says how long the session was idle, when it was last active (UTC ISO + readable local time),
 * where it stood, which subagents were cut off and what each was last doing, the anchors and todos, and that
 * interrupted work must be checked, not assumed finished. Never built for level 2+ sessions (S5-R08): the caller
 * decides that.
 */
export function buildResumeContext(input: ResumeContextInput): string {
  const lines = [
    RESUME_HEADING,
    `Resumed after ${formatIdle(input.idleMs)} idle. Last activity: ${formatTimestamp(input.previousActivityAt, input.timeZone)}.`,
    `**Previous state:** ${previousState(input)}${input.interrupted ? "; the user interrupted it (Escape or stop)" : ""}.`,
  ];
  const work = input.interruptedWork;
  if (work.length > 0) {
    const base = Math.min(...work.map((w) => w.depth));
    lines.push("**Interrupted work:**");
    for (const w of work.slice(0, MAX_WORK)) lines.push(workLine(w, Math.min(4, w.depth - base), input.timeZone));
    if (work.length > MAX_WORK) lines.push(`- …and ${work.length - MAX_WORK} more`);
  }
  const anchors = [...importantAnchors(input.anchors), ...input.anchors.filter((a) => a.priority === "normal")];
  if (anchors.length > 0) {
    lines.push("**Anchors:**");
    for (const anchor of anchors.slice(0, MAX_ANCHORS)) lines.push(anchorLine(anchor));
  }
  if (input.todo) lines.push(`**Todos:** ${input.todo.open} open of ${input.todo.total}.`);
  lines.push(
    input.interrupted || work.length > 0
      ? "**Before continuing:** interrupted work may be incomplete. Check what it left (files, todos) before redoing or re-delegating it; ask the user if unsure."
      : "**Before continuing:** re-read the todo list and confirm the next step with the user if it is unclear.",
  );
  return lines.join("\n");
}
