import { createHash } from "node:crypto";

/**
 * What the loop guard compares (docs/budgets.md, "Loop guards"): a call and its result with what does not change
 * their meaning taken out, so a model that repeats itself with cosmetic variations is still seen repeating itself.
 *
 * - Arguments: the `description` field (OpenCode's bash tool asks for one; a model rewords it freely) is dropped;
 *   object keys are sorted; in every string, a leading `./` of a path is dropped, `//` and `/./` are collapsed, a
 *   path under the project folder is made relative, runs of white space become one space.
 * - Output: read in loop-progress.ts — its shape (numbers, timestamps and ids masked) and whether its numbers moved
 *   as progress or as noise. A poll that waits is judged on its exact output instead (loop-guard.ts).
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
