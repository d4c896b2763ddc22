/**
 * Delegation allow-lists (`mayDelegateTo`): how one is read, and whether one is narrower than another. Here, below
 * delegation/, because the layer merge (policy-merge.ts) compares lists; delegation-policy.ts re-exports the readers.
 */

/** `*` matches any run of characters (including none), `?` one character; everything else literally; whole name. */
export function matchesGlob(pattern: string, name: string): boolean {
  const source = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\/-]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s").test(name);
}

/**
 * Evaluates an allow-list like OpenCode's `permission.task`: entries are globs, `!glob` denies, and the LAST matching
 * entry decides; no match denies. So `["*", "!governance-coordinator"]` allows everyone but the coordinator, and
 * `["!x", "*"]` allows x again.
 */
export function isTargetAllowed(mayDelegateTo: readonly string[], target: string): boolean {
  let allowed = false;
  for (const entry of mayDelegateTo) {
    const deny = entry.startsWith("!");
    if (matchesGlob(deny ? entry.slice(1) : entry, target)) allowed = !deny;
  }
  return allowed;
}

/** Names that tell two lists apart: every name mentioned, and each glob filled in three ways. */
function probes(lists: readonly (readonly string[])[], names: readonly string[]): string[] {
  const out = new Set<string>(names);
  out.add("an-agent-no-list-names-7f3a");
  for (const list of lists)
    for (const entry of list) {
      const glob = entry.startsWith("!") ? entry.slice(1) : entry;
      for (const fill of ["", "x", "zq-9-longer-name"]) out.add(glob.replaceAll("*", fill).replaceAll("?", "x"));
    }
  return [...out];
}

/**
 * A target `list` allows that `ceiling` denies, or null when `list` is as narrow or narrower. Checked on every agent
 * name either list or the caller names and on samples of every glob: the lists are short, and a name no entry of
 * either list matches is denied by both.
 */
export function widerTarget(list: readonly string[], ceiling: readonly string[], names: readonly string[] = []): string | null {
  for (const name of probes([list, ceiling], names)) if (isTargetAllowed(list, name) && !isTargetAllowed(ceiling, name)) return name;
  return null;
}
