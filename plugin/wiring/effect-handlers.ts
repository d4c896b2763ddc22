import { afterAbort } from "../../governance/stop/stop-ladder.ts";
import { interruptDescendants } from "../sessions/descendants.ts";
import { notifyParent } from "../stop/notify-parent.ts";
import { drainStops } from "../stop/stop-drain.ts";
import type { EffectHandlers, EffectRunner } from "../sessions/effect-runner.ts";
import type { DirectiveInbox } from "../stop/directive-inbox.ts";

/** How long a session gets to report idle after an abort through the host port. */
const CONFIRM_IDLE_MS = 3_000;

/**
 * What each effect of the core means in this plugin: audit lines, host aborts (then the core's `afterAbort`), parent
 * notifications, descendants, toasts. Built by the composition root (runtime.ts) and handed to the effect runner,
 * which only runs them (issue 29 item 3).
 */
export function effectHandlers(runner: EffectRunner, inbox: DirectiveInbox): EffectHandlers {
  const { ctx } = runner;
  /** The abort, then the host must report the session idle; what follows is the core's `afterAbort`. */
  const abort = async (sessionId: string): Promise<void> => {
    await ctx.api.abort(sessionId);
    const idle = await runner.idle.confirmIdle(sessionId, CONFIRM_IDLE_MS);
    const at = ctx.clock.now();
    const { next, action } = await runner.step(sessionId, (r) => (r ? afterAbort(r, at, idle) : { next: r, effects: [], action: "none" as const }));
    if (action === "abort-again") await ctx.api.abort(sessionId);
    else if (next?.control === "stopped") await drainStops(ctx, next, sessionId);
  };
  return {
    audit: (sessionId, effect) => ctx.record(effect.event, { sessionId, ...effect.data }),
    resume_context: async (sessionId, effect, next) => {
      if (!effect.allowed) await ctx.record("resume_context_skipped", { sessionId, level: next?.level, rule: "S5-R08" });
    },
    interrupt_descendants: (sessionId) => interruptDescendants(runner, sessionId),
    notify_parent: (sessionId, effect, next) => notifyParent(ctx, inbox, sessionId, next ?? runner.sessions.peek(sessionId), effect),
    abort_session: (sessionId, effect) => {
      ctx.timers.setTimeout(() => abort(sessionId).catch((e) => ctx.reportHookError("stop-abort", e)), effect.delayMs);
    },
    toast: (sessionId, effect) => ctx.api.toast(effect.message, effect.variant, sessionId),
  };
}
