import type { NotifyParentEffect } from "../../governance/session/effects.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { enqueue } from "../../governance/stop/directive-queue.ts";
import { stopOrigin } from "../../governance/session/stop-origin.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { DirectiveInbox } from "./directive-inbox.ts";

/**
 * `notify_parent`: the parent learns its child was stopped on its next tool result or model step (a `notify`
 * directive in its queue), and the user gets a toast. Once per stop: the ladder emits the effect once.
 */
export async function notifyParent(
  ctx: PluginContext,
  inbox: DirectiveInbox,
  childId: string,
  child: SessionRecord | undefined,
  e: NotifyParentEffect,
  opts: { toast?: boolean } = {},
): Promise<void> {
  // Structured, no text: the receiver renders it from its own record of the child (issue 8 §2, renderNotification).
  const res = await enqueue(ctx.paths, e.parentId, { kind: "notify", id: `notify-${childId}`, at: ctx.clock.now(), childId, how: e.how });
  inbox.mark(e.parentId);
  const origin = stopOrigin(child?.stop);
  await ctx.record("parent_notified", { sessionId: e.parentId, childId, how: e.how, origin, ok: res.ok });
  if (opts.toast !== false)
    await ctx.api.toast(
      `Subagent ${child?.agent ?? childId} was stopped by ${origin === "governance" ? `governance: ${child?.stop?.reason.slice(0, 80) ?? ""}` : "the user"}.`,
      "warning",
      e.parentId,
    );
}
