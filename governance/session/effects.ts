import type { AuditEventType } from "../storage/audit-log.ts";
import type { NoticeHow, SessionRecord } from "./session-record.ts";

/**
 * What a pure step of the core asks the adapter to do. The core never performs I/O; plugin/sessions/effect-runner.ts is the
 * one place that carries these out, in order, with uniform error reporting.
 */
export type AuditEffect = { type: "audit"; event: AuditEventType; data: Record<string, unknown> };
/** Record every running descendant `interrupted` (with its last tool call) and verify none is still busy. */
export type InterruptDescendantsEffect = { type: "interrupt_descendants" };
/** A resume was synthesized; `allowed` is false for level ≥ 2 (S5-R08; see `resumeContextDue`). */
export type ResumeContextEffect = { type: "resume_context"; allowed: boolean };
/** Queue a notification for the parent session (the stop ladder emits it once per stop: `stop.parentNotified`). */
export type NotifyParentEffect = { type: "notify_parent"; parentId: string; how: NoticeHow };
/** The SDK abort (`client.session.abort`) after `delayMs`; the adapter then verifies the session went idle. */
export type AbortSessionEffect = { type: "abort_session"; delayMs: number };
/** A message in the user's terminal. */
export type ToastEffect = { type: "toast"; message: string; variant: "info" | "warning" | "error" };

export type Effect = AuditEffect | InterruptDescendantsEffect | ResumeContextEffect | NotifyParentEffect | AbortSessionEffect | ToastEffect;

/** The shape of every record change: the next record (undefined = none) and what to do about it. */
export type Step = { next: SessionRecord | undefined; effects: Effect[] };

export function audit(event: AuditEventType, data: Record<string, unknown> = {}): AuditEffect {
  return { type: "audit", event, data };
}
