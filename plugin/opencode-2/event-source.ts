import { handleEvent } from "../hooks/event.ts";
import { contain } from "../runtime/contain.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { LocationFilter } from "./location-filter.ts";
import type { ExecutionStates } from "./api.ts";
import { locationOf, parseV2Event, sessionOf } from "./events.ts";
import type { V2Context, V2Event } from "./types.ts";

/** Events only the telemetry export reads (plugin/telemetry/host-signals.ts). */
const TELEMETRY_ONLY: ReadonlySet<string> = new Set(["session.step.ended"]);

/**
 * The global event stream, read for this location only: `session.created` says its location; other events
 * (`session.execution.*` carry none) are resolved with `session.get` once per session and cached.
 */
export function pumpEvents(ctx: V2Context, rt: Runtime, filter: LocationFilter, states: ExecutionStates, sink: (hook: string, error: unknown) => void) {
  let stopped = false;
  let iterator: AsyncIterator<V2Event> | undefined;
  // Tracked: an exit waits for the event under way (plugin/runtime/in-flight.ts).
  const one = rt.inFlight.track(
    contain(
      "event",
      async (raw: V2Event) => {
        const events = parseV2Event(raw);
        // Telemetry (only while export is on) also reads the steps' model and usage, which governance does not act on.
        if (events.length === 0 && !(rt.telemetry.active && TELEMETRY_ONLY.has(String(raw.type)))) return;
        const sessionId = sessionOf(raw);
        if (raw.type === "session.created" && sessionId) filter.learn(sessionId, locationOf(raw));
        if (!sessionId || !(await filter.mine(sessionId, false))) return;
        rt.telemetry.event(raw, "start");
        try {
          for (const event of events) {
            // OpenCode 2's `session.created` names no agent (nor, on some versions, a title): asked once, so the record
            // starts with them (Session.Info: `agent`, `title`).
            if (event.type === "created" && (event.agent === null || event.title === null)) {
              const info = await ctx.session.get({ sessionID: event.sessionId }).catch(() => undefined);
              event.agent ??= info?.agent ?? null;
              event.title ??= info?.title || null;
            }
            if (event.type === "status") event.status === "busy" ? states.started(event.sessionId) : states.ended(event.sessionId);
            await handleEvent(rt, event);
          }
        } finally {
          rt.telemetry.event(raw, "done");
        }
      },
      sink,
    ),
  );
  const done = (async () => {
    try {
      iterator = ctx.event.subscribe()[Symbol.asyncIterator]();
      while (!stopped) {
        const next = await iterator.next();
        if (next.done) return;
        await one(next.value);
      }
    } catch (error) {
      if (!stopped) sink("event-stream", error);
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
