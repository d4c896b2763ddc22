import type { AuditEvent, AuditEventType } from "./audit-log.ts";

/**
 * Audit types renamed so each name says what happened (issue 15). Lines already written keep their old name; the
 * readers (`log --type`, the dashboard) ask {@link matchesAuditType}, so an old name and its new one find the same
 * lines. docs/glossary.md lists them.
 *
 * - `session_interrupted` was the line of a stop REQUEST (seed 000's name), while "interrupted" is the Escape state:
 *   now `stop_queued`, the sibling of `inject_queued`.
 * - `session_stop_escalated` meant two things: a later request raising the level of a stop in progress (now
 *   `stop_escalated`, with `from`/`to`) and a level delivered on a tool result (now `stop_level_delivered`).
 * - `expired_resume` and `session_expired` were written together for one event: now `session_expired` only.
 */
export const RENAMED_AUDIT_TYPES = {
  session_interrupted: ["stop_queued"],
  session_stop_escalated: ["stop_escalated", "stop_level_delivered"],
  expired_resume: ["session_expired"],
} as const satisfies Record<string, readonly AuditEventType[]>;

type OldName = keyof typeof RENAMED_AUDIT_TYPES;
const isOldName = (type: string): type is OldName => Object.hasOwn(RENAMED_AUDIT_TYPES, type);

/** The current name of a line's type: an old line is read under the name it would be written with today. */
export function currentAuditType(event: Pick<AuditEvent, "type"> & Record<string, unknown>): string {
  switch (event.type) {
    case "session_interrupted":
      return "stop_queued";
    case "expired_resume":
      return "session_expired";
    case "session_stop_escalated":
      return "delivered" in event ? "stop_level_delivered" : "stop_escalated";
    default:
      return event.type;
  }
}

/** True when `event` is of type `wanted`, old or new name on either side (an old name matches all it was split into). */
export function matchesAuditType(event: Pick<AuditEvent, "type"> & Record<string, unknown>, wanted: string): boolean {
  const names: readonly string[] = isOldName(wanted) ? RENAMED_AUDIT_TYPES[wanted] : [wanted];
  return names.includes(currentAuditType(event));
}
