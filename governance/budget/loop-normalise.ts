import { createHash } from "node:crypto";

/**
 * What the loop guard compares (docs/budgets.md, "Loop guards"): a call and its result with what does not change
 * their meaning taken out, so a model that repeats itself with cosmetic variations is still seen repeating itself.
 *
 * - Arguments: the `description` field (OpenCode's bash tool asks for one; a model rewords it freely) is dropped;
 *   object keys are sorted; in every string, a leading `./` of a path is dropped, `//` and `/./` are collapsed, a
 *   path under the project folder is made relative, runs of white space become one space.
 * - Output: timestamps (ISO dates, times of day), long hex ids and UUIDs, and every other number are masked, so a
 *   counter or a clock in the output is not progress. A poll that waits is judged on its exact output instead
 *   (`waitsInCall`, loop-guard.ts).
 */
const COSMETIC_KEYS = new Set(["description"]);
const MAX_DEPTH = 8;

export function normaliseArgs(args: unknown, cwd?: string): string {
  return JSON.stringify(normalValue(args, cwd, 0)) ?? "";
}

function normalValue(v: unknown, cwd: string | undefined, depth: number): unknown {
  if (typeof v === "string") return normaliseText(v, cwd);
  if (v === null || typeof v !== "object" || depth >= MAX_DEPTH) return v;
  if (Array.isArray(v)) return v.map((x) => normalValue(x, cwd, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v).sort()) if (!COSMETIC_KEYS.has(key)) out[key] = normalValue((v as Record<string, unknown>)[key], cwd, depth + 1);
  return out;
}

/** Paths and white space of one argument string. */
export function normaliseText(s: string, cwd?: string): string {
  let t = s;
  if (cwd && cwd.length > 1) t = t.split(`${cwd.replace(/\/+$/, "")}/`).join("");
  return t
    .replace(/\/{2,}/g, "/")
    .replace(/\/(?:\.\/)+/g, "/")
    .replace(/(^|[\s'"=:(,[{<>|;&])(?:\.\/)+/g, "$1")
    .replace(/\s+/g, " ")
    .trim();
}

const ISO_TIME = /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g;
const CLOCK = /\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const HEX_ID = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi;
const NUMBER = /\d+(?:\.\d+)?/g;

export function normaliseOutput(text: string): string {
  return text.replace(ISO_TIME, "<time>").replace(CLOCK, "<time>").replace(UUID, "<id>").replace(HEX_ID, "<id>").replace(NUMBER, "#");
}

/** A command that waits on purpose (`sleep 5; …`, `timeout`, `watch`, `wait`). */
const WAITS = /(?:^|[\s;&|(])(?:sleep|timeout|watch|wait|usleep)\b/;
/** A call that asks how something stands: `git status`, `gh run view`, `docker ps`, `kubectl get`, a health check… */
const STATUS = /\b(?:status|healthz?|ps|jobs|poll|progress|(?:run|pr|job)\s+view|get\s+(?:pods?|jobs?|deploy\w*))\b/i;

/** True when the call's own arguments say it waits or asks for a status (a poll, not a model repeating itself). */
export function pollByArgs(tool: string, args: unknown): boolean {
  if (/status|poll|wait/i.test(tool)) return true;
  const texts: string[] = [];
  collectStrings(args, texts, 0);
  const joined = texts.join(" ").slice(0, 4_000);
  return WAITS.test(joined) || STATUS.test(joined);
}

function collectStrings(v: unknown, out: string[], depth: number): void {
  if (typeof v === "string") out.push(v);
  else if (v && typeof v === "object" && depth < MAX_DEPTH) {
    for (const [k, x] of Object.entries(v)) if (!COSMETIC_KEYS.has(k)) collectStrings(x, out, depth + 1);
  }
}

/** A short digest of a text for comparing observations; O(length), no copy kept. */
export function digest(text: string): string {
  return createHash("sha1").update(text).digest("base64").slice(0, 16);
}
