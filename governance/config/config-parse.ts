import { isMap, isNode, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import { type ConfigParse, type ConfigProblem, GovernanceConfig } from "./config-schema.ts";
import { PROJECT_HOOKS_IGNORED } from "./hooks-config.ts";

/**
 * The YAML side of the config: hand-edited text → a checked config with line and column for every problem. Kept
 * apart from config.ts so that the plugin loads the YAML parser only for a file that differs from the generated
 * defaults (`loadConfig` imports this module on demand).
 */

type Key = string | number;

/** Problems listed one by one (with line, column and did-you-mean); the rest are counted in one summary problem. */
export const MAX_PROBLEMS_LISTED = 20;

function formatPath(keys: readonly Key[]): string {
  return keys.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? k : `.${k}`)).join("");
}

/** Position of the node at `keys` (or of its key `key`), falling back to the nearest ancestor that exists. */
function locate(doc: Document, lc: LineCounter, keys: readonly Key[], key?: string): { line: number; column: number } {
  for (let n = keys.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(keys.slice(0, n), true);
    if (key !== undefined && n === keys.length && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair && isNode(pair.key) && pair.key.range) return toPos(lc, pair.key.range[0]);
    }
    if (isNode(node) && node.range) return toPos(lc, node.range[0]);
  }
  return { line: 1, column: 1 };
}

function toPos(lc: LineCounter, offset: number): { line: number; column: number } {
  const { line, col } = lc.linePos(offset);
  return { line, column: col };
}

/** File order: what a user fixes top to bottom. */
function byPosition(a: ConfigProblem, b: ConfigProblem): number {
  return (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0);
}

function deleteAt(root: unknown, keys: readonly Key[], key: string): void {
  let node = root;
  for (const k of keys) node = node && typeof node === "object" ? (node as Record<Key, unknown>)[k] : undefined;
  if (node && typeof node === "object") delete (node as Record<string, unknown>)[key];
}

/**
 * Parses hand-edited YAML. YAML syntax errors (tabs, bad indentation, duplicate keys) and schema errors (wrong type,
 * unknown enum value, negative depth) are problems with line and column; unknown keys are warnings and are ignored.
 */
/**
 * A small YAML file as plain data (the user's own settings, user-config.ts), aliases bounded. Here, beside the
 * project file's parser, so the yaml package loads in one on-demand chunk: a dynamic `import("yaml")` of its own
 * came back without its named exports in the bundled plugin under Bun (OpenCode 1.18.33: "parse is not a function").
 */
export function parseYamlData(text: string): unknown {
  const doc = parseDocument(text.replace(/^\uFEFF/, ""), { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) throw new Error(doc.errors[0]!.message);
  return doc.toJS({ maxAliasCount: 10 });
}

export function parseConfig(text: string): ConfigParse {
  const lc = new LineCounter();
  const doc = parseDocument(text.replace(/^\uFEFF/, ""), { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number, message: string): ConfigProblem => ({ message, ...toPos(lc, offset), path: "" });
  if (doc.errors.length > 0) return { ok: false, problems: doc.errors.map((e) => at(e.pos[0], e.message)) };
  const warnings = doc.warnings.map((w) => at(w.pos[0], w.message));

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 50 }) ?? {};
  } catch (error) {
    return { ok: false, problems: [{ message: String((error as Error).message), line: 1, column: 1, path: "" }] };
  }
  if (typeof raw !== "object" || Array.isArray(raw)) {
    return { ok: false, problems: [{ message: "the file must be a mapping of keys, like `phase: implementation`", ...locate(doc, lc, []), path: "" }] };
  }

  let result = GovernanceConfig.safeParse(raw);
  const unknownKeys: ConfigProblem[] = [];
  let unlisted = 0;
  // Removing unknown keys can reveal unknown keys nested in objects that failed before; a few rounds settle it.
  for (let round = 0; round < 8 && !result.success; round++) {
    const unknown = result.error.issues.filter((i) => i.code === "unrecognized_keys");
    if (unknown.length === 0) break;
    for (const issue of unknown) {
      const keys = issue.path.filter((k): k is Key => typeof k !== "symbol");
      for (const key of issue.keys) {
        deleteAt(raw, keys, key);
        // Located and spelled out for the first few only: locating is a scan of the map, and a list nobody reads
        // would crowd out the audit log (one summary line says how many more).
        if (unknownKeys.length >= MAX_PROBLEMS_LISTED) {
          unlisted++;
          continue;
        }
        const where = keys.length > 0 ? `in ${formatPath(keys)}` : "at the top level";
        const hint = didYouMean(key, knownKeysAt(keys));
        const hooks = keys.length === 0 && key === "hooks";
        unknownKeys.push({
          message: hooks ? PROJECT_HOOKS_IGNORED : `unknown key "${key}" ${where} (ignored${hint ? `; did you mean "${hint}"?` : ""})`,
          ...locate(doc, lc, keys, key),
          path: formatPath([...keys, key]),
        });
      }
    }
    result = GovernanceConfig.safeParse(raw);
  }
  if (unlisted > 0) unknownKeys.push({ message: `…and ${unlisted} more unknown keys (ignored)`, line: null, column: null, path: "" });
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const keys = issue.path.filter((k): k is Key => typeof k !== "symbol");
      return { message: issue.message, ...locate(doc, lc, keys), path: formatPath(keys) };
    });
    return { ok: false, problems: [...unknownKeys, ...problems].sort(byPosition) };
  }
  for (const [name, policy] of Object.entries(result.data.agents)) {
    if (policy.role === "leaf" && policy.mayDelegateTo.length > 0) {
      const keys = ["agents", name, "mayDelegateTo"];
      warnings.push({ message: `agent "${name}" is a leaf: mayDelegateTo is ignored`, ...locate(doc, lc, keys), path: formatPath(keys) });
    }
  }
  return { ok: true, config: result.data, warnings: warnings.sort(byPosition), problems: unknownKeys.sort(byPosition), raw: raw as Record<string, unknown> };
}

/** The keys the schema accepts in the object at `keys` (`agents.<name>` and `defaultRole` share AgentPolicy's). */
function knownKeysAt(keys: readonly Key[]): string[] {
  let schema: unknown = GovernanceConfig;
  for (const key of keys) {
    schema = unwrap(schema);
    const shape = (schema as { shape?: Record<string, unknown> }).shape;
    if (shape && typeof key === "string" && key in shape) schema = shape[key];
    else if (typeof key === "number" && (schema as { element?: unknown }).element) schema = (schema as { element: unknown }).element;
    else if ((schema as { valueType?: unknown }).valueType) schema = (schema as { valueType: unknown }).valueType;
    else return [];
  }
  const shape = (unwrap(schema) as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Peels defaults, prefaults, refinements and pipes off a zod schema to reach the object, array or record inside. */
function unwrap(schema: unknown): unknown {
  let current = schema as { def?: { innerType?: unknown; in?: unknown; schema?: unknown } };
  for (let i = 0; i < 10 && current?.def; i++) {
    const next = current.def.innerType ?? current.def.in;
    if (!next) break;
    current = next as typeof current;
  }
  return current;
}

/** The known key closest to a typo (Damerau-Levenshtein distance ≤ 2, or ≤ a third of the length), if any. */
export function didYouMean(typo: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(typo.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(typo.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3 || a.length > 64 || b.length > 64) return Infinity;
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
