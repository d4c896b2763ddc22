/**
 * What the real OpenCode 2.0.15 sent, as scripts/capture-opencode-2.ts recorded it into test/fixtures/opencode-2.0.15/,
 * and the two uses a double makes of it (CONVENTIONS 20): `replayEvent` builds each event the double emits FROM its
 * capture (the capture's keys, with the double's own values put in: a key 2.0.15 did not send cannot be added), and
 * `shapeDrift` compares a payload the double built itself (a hook input) with its capture, both ways.
 */
import fs from "node:fs";
import path from "node:path";
import type { V2Event } from "../../plugin/opencode-2/types.ts";

export const CAPTURE_VERSION = "2.0.15";
export const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", `opencode-${CAPTURE_VERSION}`);

const cache = new Map<string, unknown>();

/** A captured payload (`event.<type>`, `hook.<name>`, `probe.<name>`), parsed; a fresh copy each call. */
export function capture(name: string): unknown {
  if (!cache.has(name)) cache.set(name, JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8")));
  return structuredClone(cache.get(name));
}

/** The names of every capture of a kind (`event`, `hook`, `probe`), from the fixture files. */
export function captured(kind: "event" | "hook" | "probe"): string[] {
  return fs
    .readdirSync(FIXTURES)
    .filter((f) => f.startsWith(`${kind}.`) && f.endsWith(".json"))
    .map((f) => f.slice(kind.length + 1, -".json".length))
    .sort();
}

/** Maps whose keys are data (tool names, tool inputs, metadata, errors): compared as "an object", not key by key. */
const OPEN_MAPS = new Set(["tools", "input", "metadata", "result", "error", "model", "options", "prompt", "tokens", "output"]);

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * Where a payload the double built differs from the capture, two levels deep: a key the double sends that 2.0.15 did
 * not, a key 2.0.15 sent that the double leaves out, or a value of another JSON type. `path: why` each.
 */
export function shapeDrift(double: unknown, real: unknown, at = "", depth = 0): string[] {
  if (kind(double) !== kind(real)) return [`${at || "(root)"}: the double sends ${kind(double)}, ${kind(real)} was captured`];
  if (kind(double) !== "object" || depth >= 2) return [];
  const d = double as Record<string, unknown>;
  const r = real as Record<string, unknown>;
  const missing = Object.keys(r)
    .filter((key) => !(key in d))
    .map((key) => `${at ? `${at}.${key}` : key}: 2.0.15 sends it, the double does not`);
  return [
    ...Object.keys(d).flatMap((key) => {
      const here = at ? `${at}.${key}` : key;
      if (!(key in r)) return [`${here}: the double sends it, the real host does not`];
      if (OPEN_MAPS.has(key)) return kind(d[key]) === kind(r[key]) ? [] : [`${here}: the double sends ${kind(d[key])}, ${kind(r[key])} was captured`];
      return shapeDrift(d[key], r[key], here, depth + 1);
    }),
    ...missing,
  ];
}

export class CaptureDrift extends Error {}

/**
 * The captured `data` with the double's values put in. A value for a key the capture does not have, or of another
 * JSON type, throws: the double cannot send what 2.0.15 does not (the `callID` and `kind` it once invented).
 */
function fill(type: string, captured: Record<string, unknown>, values: Record<string, unknown>): Record<string, unknown> {
  const out = { ...captured };
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    if (!(key in captured)) throw new CaptureDrift(`${type}: the double sends data.${key}, ${CAPTURE_VERSION} did not`);
    if (kind(value) !== kind(captured[key])) throw new CaptureDrift(`${type}: data.${key} is ${kind(value)} in the double, ${kind(captured[key])} as captured`);
    out[key] = value;
  }
  return out;
}

let seq = 0;

/**
 * An event as 2.0.15 sends it, from its capture: the envelope's keys as captured (`location` only where 2.0.15 sends
 * one — `session.execution.*` carry none), `durable` where captured, and `data` = the captured data with the double's
 * values. `variant` picks another capture of the same type (`child`: a `session.created` with `parentID`).
 */
export function replayEvent(type: string, sessionID: string, values: Record<string, unknown>, directory: string | undefined, variant?: string): V2Event {
  const real = capture(`event.${type}${variant ? `.${variant}` : ""}`) as Record<string, unknown>;
  const data = fill(type, real.data as Record<string, unknown>, { sessionID, ...values });
  if ("location" in data && directory !== undefined) data.location = { directory };
  const event: Record<string, unknown> = { ...real, id: `evt_${(++seq).toString().padStart(6, "0")}double`, created: Date.now(), data };
  if ("location" in real) event.location = directory === undefined ? real.location : { directory };
  if ("durable" in real) event.durable = { ...(real.durable as object), aggregateID: sessionID };
  return event as V2Event;
}
