import type { Effect, Step } from "../../governance/session/effects.ts";
import type { SessionEvent } from "../../governance/session/session-machine.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { afterAbort } from "../../governance/stop/stop-ladder.ts";
import type { PluginContext } from "./context.ts";
import { interruptDescendants } from "../sessions/descendants.ts";
import type { DirectiveInbox } from "../stop/directive-inbox.ts";
import type { IdleWatch } from "../sessions/idle-watch.ts";
import { notifyParent } from "../stop/notify-parent.ts";
import type { Applied, SessionRuntime } from "../sessions/session-runtime.ts";
import { drainStops } from "../stop/stop-drain.ts";

/** How long a session gets to report idle after an SDK abort. */
const CONFIRM_IDLE_MS = 3_000;

/**
 * parse → decide → run: hooks parse OpenCode's payload, the core decides (a pure step), and this runner carries out
 * every effect the core asked for — audit lines, SDK aborts, parent notifications, descendants, toasts — in order,
 * each failure reported the same way (`hook_error` with the effect's name) without stopping the others.
 */
export class EffectRunner {
  constructor(
    readonly ctx: PluginContext,
    readonly sessions: SessionRuntime,
    readonly idle: IdleWatch,
    readonly inbox: DirectiveInbox,
  ) {}

  /** One machine event (see SessionRuntime.transition), then its effects. */
  async dispatch(sessionId: string, event: SessionEvent, opts: { soft?: boolean } = {}): Promise<SessionRecord | undefined> {
    const applied = await this.sessions.transition(sessionId, event, opts);
    await this.run(sessionId, applied.effects, applied);
    return applied.next;
  }

  /** One pure step of the core (child links, spawn decisions, stop ladder …), then its effects. */
  async step<S extends Step>(sessionId: string, fn: (current: SessionRecord | undefined) => S): Promise<Applied<S>> {
    const applied = await this.sessions.step(sessionId, fn);
    await this.run(sessionId, applied.effects, applied);
    return applied;
  }

  async run(sessionId: string, effects: readonly Effect[], records: { next?: SessionRecord | undefined } = {}): Promise<void> {
    for (const effect of effects) {
      try {
        await this.#one(sessionId, effect, records.next);
      } catch (error) {
        this.ctx.reportHookError(`effect:${effect.type}`, error);
      }
    }
  }

  async #one(sessionId: string, effect: Effect, next: SessionRecord | undefined): Promise<void> {
    switch (effect.type) {
      case "audit":
        return this.ctx.record(effect.event, { sessionId, ...effect.data });
      case "resume_context":
        if (!effect.allowed) await this.ctx.record("resume_context_skipped", { sessionId, level: next?.level, rule: "S5-R08" });
        return;
      case "interrupt_descendants":
        return interruptDescendants(this, sessionId);
      case "notify_parent":
        return notifyParent(this.ctx, this.inbox, sessionId, next ?? this.sessions.peek(sessionId), effect);
      case "abort_session":
        this.ctx.timers.setTimeout(() => this.#abort(sessionId).catch((e) => this.ctx.reportHookError("stop-abort", e)), effect.delayMs);
        return;
      case "toast":
        return this.ctx.api.toast(effect.message, effect.variant);
    }
  }

  /** The SDK abort, then OpenCode must report the session idle; what follows is the core's `afterAbort`. */
  async #abort(sessionId: string): Promise<void> {
    await this.ctx.api.abort(sessionId);
    const idle = await this.idle.confirmIdle(sessionId, CONFIRM_IDLE_MS);
    const at = this.ctx.clock.now();
    const { next, action } = await this.step(sessionId, (r) => (r ? afterAbort(r, at, idle) : { next: r, effects: [], action: "none" as const }));
    if (action === "abort-again") await this.ctx.api.abort(sessionId);
    else if (next?.control === "stopped") await drainStops(this.ctx, next, sessionId);
  }
}
