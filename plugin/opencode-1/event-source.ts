import { handleEvent } from "../hooks/event.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { parseEvents } from "./events.ts";

/**
 * OpenCode 1's event source, the `event` hook: each bus event parsed ONCE (events.ts), and the answer handed to
 * telemetry (turn spans, only while export is on) and to governance (plugin/hooks/event.ts `handleEvent`).
 */
export async function onEvent(rt: Runtime, raw: unknown): Promise<void> {
  const events = parseEvents(raw);
  if (events.length === 0) return;
  rt.telemetry.events(events, "start");
  try {
    for (const event of events) await handleEvent(rt, event);
  } finally {
    rt.telemetry.events(events, "done");
  }
}
