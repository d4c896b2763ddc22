import type { StaleWarning } from "../session/stale-state.ts";
import type { FirstAction } from "../session/session-record.ts";
import type { TextTools } from "../host/host-lines.ts";
import { formatIdle } from "../time/time-format.ts";
import { firstActionNoteLine, staleNoteLine } from "./check-notes.ts";
import { agentToken, sessionToken } from "../text-safety/text-parts.ts";

/** First line of the status note; adapters and tests find it by this. */
export const STATUS_NOTE_HEADING = "## Governance Status (opencode-governance)";

export interface OrphanNote {
  sessionId: string;
  agent: string | null;
  /** Time since the orphan's last activity. */
  idleMs: number;
}

export interface StatusNoteInput {
  /** The resume context of this turn (built once when the session resumed: resume-context.ts), or none. */
  resume?: string | undefined;
  /** The post-compaction reminder while one is pending (post-compact-reminder.ts), or none. */
  reminder?: string | undefined;
  todo: { total: number; open: number } | null;
  /** Subagents found orphaned (seed 000: no activity for `orphans.staleAfter`). At most 5 are shown. */
  orphans?: readonly OrphanNote[];
  /** Stale-state warnings for this model (`modelStaleWarnings`: todo list, phase). */
  stale?: readonly StaleWarning[];
  /** A missed first action, while the turn it happened in runs (`firstActionDue`). */
  firstAction?: FirstAction | undefined;
  /** A spend cap over a day or a week that is spent (a root session is told: spend-notices.ts `capSpentNote`). */
  spent?: string | undefined;
  /** The tools the texts name, as the host offers them (OpenCode 1's when absent). */
  tools?: TextTools;
}

const MAX_ORPHANS = 5;

/**
 * The governance text that can change between two model requests of a session, in one note that the adapter puts
 * at the very end of the request (after the last message, so after every cache breakpoint the host sets): the resume
 * context of a resumed turn, the post-compaction reminder, a missed first action, the todo count, stale-state warnings,
 * orphan warnings. The system prompt keeps only what is stable for the session (the governance prefix), so a
 * provider's prompt cache survives every step (docs/decisions/0011-stable-system-prompt.md). Undefined when there is nothing to say: no bytes are added then.
 *
 * The texts are the same as when they were placed in the system prompt or appended to the last message; only the
 * heading that says where they come from is added.
 */
export function buildStatusNote(input: StatusNoteInput): string | undefined {
  const sections: string[] = [];
  if (input.resume) sections.push(input.resume);
  if (input.reminder) sections.push(input.reminder);
  const lines: string[] = [];
  if (input.spent) lines.push(input.spent);
  if (input.firstAction) lines.push(firstActionNoteLine(input.firstAction, input.tools));
  if (input.todo) lines.push(`**Todos:** ${input.todo.open} open of ${input.todo.total}.`);
  for (const w of input.stale ?? []) lines.push(staleNoteLine(w, input.tools));
  const orphans = input.orphans ?? [];
  if (orphans.length > 0) {
    lines.push("**Orphaned subagents** (no recent activity; their work may be incomplete, check it before re-delegating):");
    for (const o of orphans.slice(0, MAX_ORPHANS)) lines.push(`- ${agentToken(o.agent)} (${sessionToken(o.sessionId)}), idle ${formatIdle(o.idleMs)}`);
    if (orphans.length > MAX_ORPHANS) lines.push(`- …and ${orphans.length - MAX_ORPHANS} more`);
  }
  if (lines.length > 0) sections.push(lines.join("\n"));
  if (sections.length === 0) return undefined;
  return [`${STATUS_NOTE_HEADING}\nAutomatic governance context for this step, not a message from the user.`, ...sections].join("\n\n");
}
