import { handleEvents } from "../hooks/event.ts";
import type { Runtime } from "../wiring/runtime.ts";
import { parseEvents } from "./events.ts";
import type { Summarizing } from "./model-step.ts";

/**
 * OpenCode 1's event source, the `event` hook (called for every bus event, not awaited): each event parsed ONCE
 * (events.ts), and the answer handed to telemetry (turn spans, only while export is on) and to governance
 * (plugin/hooks/event.ts `handleEvents`); the first session event tells the runtime a client is there. Most events need no waiting, and get no promise.
 * A written summary ends OpenCode 1's summarizing quirk (`Summarizing`, model-step.ts).
 */
export function onEvent(rt: Runtime, raw: unknown, summarizing?: Summarizing): Promise<void> | undefined {
  const events = parseEvents(raw);
  summarizing?.onEvents(events);
  // A session's model output (the user's first turn in the TUI): a client is there and showing it (plugin/sessions/resume-offer.ts).
  if (events.some((e) => e.type === "output")) rt.resumeOffer.clientActive();
  return handleEvents(rt, events);
}
