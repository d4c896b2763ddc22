import { type StaleWarning, staleWarnings } from "../session/stale-state.ts";
import type { FirstAction, SessionRecord } from "../session/session-record.ts";
import { formatIdle } from "../time/time-format.ts";
import { CORE_LINE, CORE_TEXT_TOOLS, type HostLine, hostToolName, type TextTools } from "../host/host-lines.ts";
import { defaultFirstActions } from "./governance-prefix.ts";
import { plainLine, ROLE_LABEL } from "../text-safety/text-parts.ts";

/**
 * The words of the session checks (session/stale-state.ts, session/first-action.ts), twice: a line for the session's
 * own model (its status note, status-note.ts: what to do about it) and a short label for the user (`status`, the
 * dashboard: what is wrong). Built from typed data; the one free value (the phase, from the config) is one clipped line.
 */

/** The status-note line of a stale-state warning; `tools`: the tools the host offers, as the texts name them. */
export function staleNoteLine(w: StaleWarning, tools: TextTools = CORE_TEXT_TOOLS): string {
  switch (w.kind) {
    case "todo":
      return `**Stale todo list:** ${w.open} of ${w.total} open, unchanged for ${w.toolCalls} tool calls. ${tools.todo ? `Update it (\`${tools.todo}\`)` : "Update it"} so it says where the work stands.`;
    case "phase":
      return `**Phase check:** the project phase has been ${plainLine(w.phase, 60)} for ${formatIdle(w.forMs)}. If the work has moved on, ask the user to update \`phase\` in .opencode/governance.yaml.`;
    case "activity":
      return `**No activity** for ${formatIdle(w.idleMs)}.`;
  }
}

/** The user's label of a stale-state warning. */
export function staleLabel(w: StaleWarning): string {
  switch (w.kind) {
    case "todo":
      return `stale todo list: ${w.open} open, unchanged for ${w.toolCalls} tool calls`;
    case "phase":
      return `phase ${plainLine(w.phase, 60)} unchanged for ${formatIdle(w.forMs)}`;
    case "activity":
      return `no activity for ${formatIdle(w.idleMs)} while running`;
  }
}

/** The status-note reminder after a missed first action, the tool named as the model called it (the record keeps the core's name). */
export function firstActionNoteLine(f: FirstAction, tools: TextTools = CORE_TEXT_TOOLS): string {
  return `**First action missed:** your first call was \`${plainLine(hostToolName(tools.line, f.tool), 60)}\`; as ${ROLE_LABEL[f.role]} your first action is: ${defaultFirstActions(f.role, tools)[0]} Do that before going on.`;
}

/** The user's label of a missed first action; the tool as `line` names it (the record keeps the core's name). */
export function firstActionLabel(f: FirstAction, line: HostLine = CORE_LINE): string {
  return `first action missed: ${plainLine(hostToolName(line, f.tool), 60)} first (${ROLE_LABEL[f.role]})`;
}

/**
 * What the checks say about a session, for the user (`status`, `sessions --json`, the dashboard): a missed first action
 * (for the session's life: the record keeps it), then its stale-state warnings at `now` (only while it runs); tools
 * named as `line` offers them.
 */
export function checkLabels(r: SessionRecord, now: number, line: HostLine = CORE_LINE): string[] {
  const labels = staleWarnings(r, now).map(staleLabel);
  return r.firstAction && !r.firstAction.ok ? [firstActionLabel(r.firstAction, line), ...labels] : labels;
}
