import type { LayerSettings } from "./layer-settings.ts";

/**
 * The user's and the organisation's files are ceilings over every project, and files any process of the user can
 * write (issue 41 §3: `rm -f ~/.config/opencode/governance.yaml` mid-run gave a capped subagent 13 calls, and
 * `rootSessions: false` written into it turned the root guard off). A running process therefore holds the last good
 * ceilings it read: a file that disappears, breaks or loosens while it runs is not obeyed until OpenCode restarts
 * (audited `ceiling_kept`, shown as a toast); a file that only tightens is taken at once. Pure.
 */
export type CeilingRead = { settings: LayerSettings | undefined; state: "file" | "missing" | "broken" };

export type CeilingHold = {
  /** The settings in force for this layer now. */
  settings: LayerSettings | undefined;
  /** What the next load compares with. */
  lastGood: LayerSettings | undefined;
  /** Why the file as read was not taken, and which settings it would have loosened; null when it was taken. */
  kept: { why: "missing" | "broken" | "loosened"; paths: string[] } | null;
};

/** Settings whose change is not a loosening of governance (where spans go and what they carry). */
const FREE = new Set(["telemetry", "schemaVersion"]);
/** Boolean switches whose `true` is the governed side. */
const ON_IS_TIGHT = new Set(["guard.rootSessions", "loops.enabled"]);

export function holdCeiling(lastGood: LayerSettings | undefined, read: CeilingRead): CeilingHold {
  if (lastGood === undefined) return { settings: read.settings, lastGood: read.state === "file" ? read.settings : undefined, kept: null };
  if (read.state !== "file" || !read.settings)
    return { settings: lastGood, lastGood, kept: { why: read.state === "broken" ? "broken" : "missing", paths: [] } };
  const paths = loosenedPaths(lastGood, read.settings);
  if (paths.length > 0) return { settings: lastGood, lastGood, kept: { why: "loosened", paths } };
  return { settings: read.settings, lastGood: read.settings, kept: null };
}

/**
 * The settings of `before` that `after` leaves out or sets looser: a higher number (a limit, a depth, a deadline), a
 * switch turned off, `log-only`, a role or a list that names something new. Anything else that changed counts as
 * looser too: a running process keeps what it had rather than guess.
 */
export function loosenedPaths(before: unknown, after: unknown, at = ""): string[] {
  if (FREE.has(at)) return [];
  if (isObject(before)) {
    if (!isObject(after)) return [at || "(all)"];
    return Object.keys(before).flatMap((k) => loosenedPaths(before[k], after[k], at ? `${at}.${k}` : k));
  }
  if (after === undefined) return [at];
  if (Array.isArray(before)) return Array.isArray(after) && after.every((v) => before.includes(v)) ? [] : [at];
  if (typeof before === "number") return typeof after === "number" && after <= before ? [] : [at];
  if (typeof before === "boolean" && ON_IS_TIGHT.has(at)) return after === true || after === before ? [] : [at];
  if (at === "enforcement") return after === before || after === "enforce" ? [] : [at];
  return after === before ? [] : [at];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
