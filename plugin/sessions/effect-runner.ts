import type { Effect, Step } from "../../governance/session/effects.ts";
import type { SessionEvent } from "../../governance/session/session-machine.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { IdleWatch } from "./idle-watch.ts";
import type { Applied, SessionRuntime } from "./session-runtime.ts";

/** One handler per kind of effect: what the effect means in this plugin (plugin/wiring/effect-handlers.ts). */
export type EffectHandlers = {
  [K in Effect["type"]]: (sessionId: string, effect: Extract<Effect, { type: K }>, next: SessionRecord | undefined) => Promise<void> | void;
};

/**
 * parse → decide → run: adapters parse their host's payload, the core decides (a pure step), and this runner runs
 * every effect the core asked for, in order, each failure reported the same way (`hook_error` with the effect's name)
 * without stopping the others. It only runs: what each effect means is a handler the composition root hands it
 * (`handle`, from runtime.ts: plugin/wiring/effect-handlers.ts).
 */
export class EffectRunner {
  constructor(
    readonly ctx: PluginContext,
    readonly sessions: SessionRuntime,
    readonly idle: IdleWatch,
  ) {}

  #handlers: EffectHandlers | undefined;

  /** The composition root hands the handlers over, once, before any hook runs. */
  handle(handlers: EffectHandlers): void {
    if (this.#handlers) throw new Error("the effect handlers are handed over once");
    this.#handlers = handlers;
  }

  /** One machine event, read and written at once (see SessionRuntime.transition), then its effects. */
  async dispatch(sessionId: string, event: SessionEvent): Promise<SessionRecord | undefined> {
    const applied = await this.sessions.transition(sessionId, event);
    await this.run(sessionId, applied.effects, applied);
    return applied.next;
  }

  /**
   * A hot-path machine event (a model step, a tool call): applied to the record in memory and written behind
   * (SessionRuntime.softTransition), answered at once when it has no effects (issue 31); a record this process has not
   * read yet is read and written at once (`dispatch`).
   */
  dispatchSoft(sessionId: string, event: SessionEvent): SessionRecord | undefined | Promise<SessionRecord | undefined> {
    const applied = this.sessions.softTransition(sessionId, event);
    if (!applied) return this.dispatch(sessionId, event);
    if (applied.effects.length === 0) return applied.next;
    return this.run(sessionId, applied.effects, applied).then(() => applied.next);
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
    const handler = this.#handlers?.[effect.type] as ((id: string, e: Effect, n: SessionRecord | undefined) => Promise<void> | void) | undefined;
    if (!handler) throw new Error(`no handler for the effect ${effect.type}`);
    await handler(sessionId, effect, next);
  }
}
