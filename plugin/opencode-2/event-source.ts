import { handleEvent } from "../hooks/event.ts";
import { contain } from "../runtime/contain.ts";
import type { Runtime } from "../runtime/runtime.ts";
import type { LocationFilter } from "./location-filter.ts";
import type { ExecutionStates } from "./api.ts";
import { TELEMETRY_ONLY } from "../hooks/host-event.ts";
import { locationOf, parseV2Event, sessionOf } from "./events.ts";
import type { V2Context, V2Event } from "./types.ts";

/**
 * OpenCode 2's event source: the global event stream, each event parsed ONCE (events.ts) and handed to telemetry and
 * governance (plugin/hooks/event.ts `handleEvent`), read for this location only: `session.created` says its location; other events
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
        // Parsed once (events.ts): governance and telemetry read the same answer.
        const events = parseV2Event(raw);
        // What only telemetry reads (a step's model and usage) is not worth a location lookup while export is off.
        if (events.length === 0 || (!rt.telemetry.active && events.every((e) => TELEMETRY_ONLY.has(e.type)))) return;
        const sessionId = sessionOf(raw);
        if (raw.type === "session.created" && sessionId) filter.learn(sessionId, locationOf(raw));
        if (!sessionId || !(await filter.mine(sessionId, false))) return;
        rt.telemetry.events(events, "start");
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
          rt.telemetry.events(events, "done");
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
