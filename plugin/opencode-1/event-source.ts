import { handleEvents } from "../hooks/event.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { parseEvents } from "./events.ts";

/**
 * OpenCode 1's event source, the `event` hook (called for every bus event, not awaited): each event parsed ONCE
 * (events.ts), and the answer handed to telemetry (turn spans, only while export is on) and to governance
 * (plugin/hooks/event.ts `handleEvents`). Most events need no waiting, and get no promise.
 */
export function onEvent(rt: Runtime, raw: unknown): Promise<void> | undefined {
  return handleEvents(rt, parseEvents(raw));
}
