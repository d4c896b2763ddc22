import path from "node:path";
import { handleEvents } from "../hooks/event.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { ExecutionStates } from "./api.ts";
import { TELEMETRY_ONLY } from "../runtime/host-event.ts";
import { locationOf, parseV2Event, sessionOf } from "./events.ts";
import type { V2Context, V2Event, V2Hook } from "./types.ts";
import type { HookWiring } from "../wiring/hook-wiring.ts";

/**
 * OpenCode 2's event source: the global event stream, each event parsed ONCE (events.ts) and handed to telemetry and
 * governance (plugin/hooks/event.ts `handleEvents`), read for this location only: `session.created` says its location; other events
 * (`session.execution.*` carry none) are resolved with `session.get` once per session and cached.
 */
export function pumpEvents(ctx: V2Context, rt: Runtime, filter: LocationFilter, states: ExecutionStates, wire: HookWiring<V2Hook>) {
  let stopped = false;
  let iterator: AsyncIterator<V2Event> | undefined;
  // Each event through the one wiring: contained, tracked (an exit waits for the event under way), timed as `event`.
  const one = wire.hook("event", async (raw: V2Event) => {
    // Parsed once (events.ts): governance and telemetry read the same answer.
    const events = parseV2Event(raw);
    // A session's model output: a client is there and showing it (plugin/sessions/resume-offer.ts).
    if (events.some((e) => e.type === "output")) rt.resumeOffer.clientActive();
    // What only telemetry reads (a step's model and usage) is not worth a location lookup while export is off.
    if (events.length === 0 || (!rt.telemetry.active && events.every((e) => TELEMETRY_ONLY.has(e.type)))) return;
    const sessionId = sessionOf(raw);
    if (raw.type === "session.created" && sessionId) filter.learn(sessionId, locationOf(raw));
    if (!sessionId || !(await filter.mine(sessionId, false))) return;
    for (const event of events) {
      // OpenCode 2's `session.created` names no agent (nor, on some versions, a title): asked once, so the record
      // starts with them (Session.Info: `agent`, `title`).
      if (event.type === "created" && (event.agent === null || event.title === null)) {
        const info = await ctx.session.get({ sessionID: event.sessionId }).catch(() => undefined);
        event.agent ??= info?.agent ?? null;
        event.title ??= info?.title || null;
      }
      if (event.type === "status") event.status === "busy" ? states.started(event.sessionId) : states.ended(event.sessionId);
    }
    // To telemetry and governance, as OpenCode 1's are (plugin/hooks/event.ts).
    await handleEvents(rt, events);
  });
  const done = (async () => {
    try {
      iterator = ctx.event.subscribe()[Symbol.asyncIterator]();
      while (!stopped) {
        const next = await iterator.next();
        if (next.done) return;
        await one(next.value);
      }
    } catch (error) {
      if (!stopped) wire.sink("event-stream", error);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await iterator?.return?.().catch(() => undefined);
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    },
  };
}

/**
 * OpenCode 2 loads one plugin instance per location, but `ctx.event.subscribe()` is one global stream across all
 * locations, and `session.execution.*` events carry no location. A session belongs to this instance when its
 * location's directory is this instance's: learned from `session.created` (which carries it), else asked once with
 * `session.get` and cached. Without `ctx.location` (a host that does not give it) nothing is filtered.
 */
export class LocationFilter {
  readonly #dir: string | undefined;
  readonly #known = new Map<string, boolean>();
  readonly #asking = new Map<string, Promise<boolean | undefined>>();
  readonly #get: V2Context["session"]["get"];

  constructor(directory: string | undefined, get: V2Context["session"]["get"]) {
    this.#dir = directory === undefined ? undefined : path.resolve(directory);
    this.#get = get;
  }

  #same(directory: string | undefined): boolean {
    return directory !== undefined && path.resolve(directory) === this.#dir;
  }

  /** An event that names its location (session.created): remembered without a lookup. */
  learn(sessionId: string, directory: string | undefined): void {
    if (this.#dir === undefined || directory === undefined) return;
    this.#known.set(sessionId, this.#same(directory));
  }

  /**
   * Whether the session is this location's. `unknown` is the answer when the host cannot tell (lookup failed): false
   * for the global event stream (another instance may own it), true inside a hook the host called on this instance.
   */
  async mine(sessionId: string, unknown: boolean): Promise<boolean> {
    if (this.#dir === undefined) return true;
    const known = this.#known.get(sessionId);
    if (known !== undefined) return known;
    let asking = this.#asking.get(sessionId);
    if (!asking) {
      asking = this.#lookup(sessionId);
      this.#asking.set(sessionId, asking);
    }
    const answer = await asking;
    return answer ?? unknown;
  }

  async #lookup(sessionId: string): Promise<boolean | undefined> {
    try {
      const info = await this.#get({ sessionID: sessionId });
      const mine = this.#same(info?.location?.directory);
      this.#known.set(sessionId, mine);
      return mine;
    } catch {
      return undefined;
    } finally {
      this.#asking.delete(sessionId);
    }
  }
}
