import type { NotifyParentEffect } from "../governance/session/effects.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { enqueue } from "../governance/stop/directive-queue.ts";
import { buildParentNotification } from "../governance/texts/stop-directives.ts";
import type { PluginContext } from "./context.ts";
import type { DirectiveInbox } from "./directive-inbox.ts";

/**
 * `notify_parent`: the parent learns its child was stopped on its next tool result or model step (a `notify`
 * directive in its queue), and the user gets a toast. Once per stop: the ladder emits the effect once.
 */
export async function notifyParent(ctx: PluginContext, inbox: DirectiveInbox, childId: string, child: SessionRecord | undefined, e: NotifyParentEffect): Promise<void> {
  const text = buildParentNotification({
    childAgent: child?.agent ?? null,
    childSessionId: childId,
    reason: child?.stop?.reason ?? "",
    how: e.how,
    lastToolCall: child?.lastToolCall ?? null,
  });
  const res = await enqueue(ctx.paths, e.parentId, { kind: "notify", id: `notify-${childId}`, at: ctx.clock.now(), text });
  inbox.mark(e.parentId);
  await ctx.record("parent_notified", { sessionId: e.parentId, childId, how: e.how, ok: res.ok });
  await ctx.api.toast(`Subagent ${child?.agent ?? childId} was stopped.`, "warning");
}
