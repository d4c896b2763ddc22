import type { SessionRecord } from "../session/session-record.ts";
import { buildParentNotification } from "../texts/stop-directives.ts";
import type { NotifyDirective } from "./directive-queue.ts";
import { stopOrigin } from "../session/stop-origin.ts";

export type NotificationText = { ok: true; text: string } | { ok: false; reason: string };

/**
 * The words a parent reads when its child was stopped, made at delivery by the receiving process from its own record
 * of the child: the queue file only says which child and how (issue 8 §2). A notification about a session that is not
 * a child of the receiver, or that this process has no record of, is refused (the caller audits it). `seal` is the
 * receiver's (directive-seal.ts).
 */
export function renderNotification(directive: NotifyDirective, receiverId: string, child: SessionRecord | null | undefined, seal: string): NotificationText {
  if (!child) return { ok: false, reason: `no record of session ${directive.childId}` };
  if (child.parentId !== receiverId) return { ok: false, reason: `session ${directive.childId} is not a child of ${receiverId}` };
  return {
    ok: true,
    text: buildParentNotification({
      childAgent: child.agent,
      childSessionId: child.sessionId,
      reason: child.stop?.reason ?? "",
      origin: stopOrigin(child.stop),
      how: directive.how,
      seal,
      lastToolCall: child.lastToolCall ? { tool: child.lastToolCall.tool, summary: child.lastToolCall.summary, at: child.lastToolCall.at } : null,
      handback: child.handback,
    }),
  };
}
