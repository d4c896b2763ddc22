import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { isMap, isNode, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import * as z from "zod";
import { DEFAULT_AGENTS, DEFAULT_CONFIG_YAML } from "./config-defaults.ts";
import { parseDuration } from "../time/time-format.ts";
import { checkOpencodeDir, readRegularFile } from "../storage/safe-fs.ts";

export { DEFAULT_CONFIG_YAML };

/** A duration in config: `"90s"`, `"10m"`, `"1h"`, `"48h"`, `"2d"` or milliseconds; milliseconds after parsing. */
export const Duration = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = parseDuration(value);
  if (parsed.ok) return parsed.ms;
  ctx.addIssue({ code: "custom", message: parsed.reason });
  return z.NEVER;
});
export type Duration = z.infer<typeof Duration>;

/** primary: coordinates and never edits; delegating: may spawn allowed agents; leaf: cannot delegate. */
export const AgentRole = z.enum(["primary", "delegating", "leaf"]);
export type AgentRole = z.infer<typeof AgentRole>;

/**
 * Who an agent is and whom it may spawn. `mayDelegateTo` holds agent names or globs (`*` = any run of characters,
 * a leading `!` denies); the last matching entry wins, like OpenCode's `permission.task`. No match = denied.
 */
export const AgentPolicy = z.strictObject({
  role: AgentRole,
  mayDelegateTo: z.array(z.string().min(1)).default(() => []),
});
export type AgentPolicy = z.infer<typeof AgentPolicy>;

export const AnchorPriority = z.enum(["critical", "high", "normal"]);
export type AnchorPriority = z.infer<typeof AnchorPriority>;

/** Anchors are re-sent to every model after each compaction: their number and length are bounded. */
export const MAX_ANCHORS = 20;

/** A fact every agent must keep. Short by construction: anchors are re-sent to the model after every compaction. */
export const Anchor = z.strictObject({
  id: z.string().regex(/^[\w.-]{1,40}$/, "anchor id: 1-40 letters, digits, '.', '_' or '-'"),
  text: z.string().trim().min(1).max(300),
  priority: AnchorPriority.default("normal"),
});
export type Anchor = z.infer<typeof Anchor>;

const LanguageName = z.string().trim().min(1).max(40);

/**
 * The whole config. Every field has a default, so `{}` (an empty file) is valid and equals DEFAULT_CONFIG_YAML.
 * Objects are strict: an unknown key is an issue here, which `parseConfig` turns into a warning and ignores, so a
 * typo is reported but never stops the plugin. Durations are milliseconds in the output.
 */
export const GovernanceConfig = z.strictObject({
  schemaVersion: z.literal(1).default(1),
  language: z.strictObject({ communication: LanguageName.default("English"), documents: LanguageName.default("English") }).prefault({}),
  phase: z.string().trim().min(1).max(60).default("implementation"),
  enforcement: z.enum(["enforce", "log-only"]).default("enforce"),
  delegation: z.strictObject({ maxDepth: z.number().int().min(0, "maxDepth must be 0 or more").max(16).default(3) }).prefault({}),
  defaultRole: AgentPolicy.prefault({ role: "delegating", mayDelegateTo: ["*"] }),
  agents: z.record(z.string().min(1), AgentPolicy).prefault(DEFAULT_AGENTS),
  resume: z
    .strictObject({ minIdle: Duration.prefault("1h"), maxIdle: Duration.prefault("48h") })
    .prefault({})
    .refine((r) => r.minIdle < r.maxIdle, { message: "resume.minIdle must be shorter than resume.maxIdle", path: ["maxIdle"] }),
  orphans: z.strictObject({ staleAfter: Duration.prefault("10m") }).prefault({}),
  stop: z.strictObject({ deadline: Duration.prefault("5s"), retryDeadline: Duration.prefault("5s") }).prefault({}),
  inject: z.strictObject({ maxLength: z.number().int().min(1).max(4000).default(500) }).prefault({}),
  anchors: z
    .array(Anchor)
    .max(MAX_ANCHORS, `at most ${MAX_ANCHORS} anchors: every one is re-sent to the model after each compaction`)
    .default(() => []),
  audit: z.strictObject({ maxBytes: z.number().int().min(4096).default(1_048_576) }).prefault({}),
});
export type GovernanceConfig = z.infer<typeof GovernanceConfig>;

/** The schema defaults. Treat as read-only. */
export const DEFAULT_CONFIG: GovernanceConfig = GovernanceConfig.parse({});

/** Where and what. `line`/`column` are 1-based; null when the problem has no place in the file (I/O). */
export interface ConfigProblem {
  message: string;
  line: number | null;
  column: number | null;
  /** Dotted config path (`delegation.maxDepth`, `anchors[0].priority`); "" for the whole file. */
  path: string;
}

/**
 * `ok: true` with `problems`: the file is usable (the rest of it is in force) but contains mistakes the user must
 * fix — unknown keys, which are almost always typos of a limit the user meant to set (`maxDepht`). They are
 * reported as problems (status, doctor failure, audit) rather than quiet warnings.
 */
export type ConfigParse =
  | { ok: true; config: GovernanceConfig; warnings: ConfigProblem[]; problems: ConfigProblem[] }
  | { ok: false; problems: ConfigProblem[] };

type Key = string | number;

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
  // Removing unknown keys can reveal unknown keys nested in objects that failed before; a few rounds settle it.
  for (let round = 0; round < 8 && !result.success; round++) {
    const unknown = result.error.issues.filter((i) => i.code === "unrecognized_keys");
    if (unknown.length === 0) break;
    for (const issue of unknown) {
      const keys = issue.path.filter((k): k is Key => typeof k !== "symbol");
      for (const key of issue.keys) {
        const where = keys.length > 0 ? `in ${formatPath(keys)}` : "at the top level";
        const hint = didYouMean(key, knownKeysAt(keys));
        unknownKeys.push({
          message: `unknown key "${key}" ${where} (ignored${hint ? `; did you mean "${hint}"?` : ""})`,
          ...locate(doc, lc, keys, key),
          path: formatPath([...keys, key]),
        });
        deleteAt(raw, keys, key);
      }
    }
    result = GovernanceConfig.safeParse(raw);
  }
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
  return { ok: true, config: result.data, warnings: warnings.sort(byPosition), problems: unknownKeys.sort(byPosition) };
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

export interface LoadedConfig {
  config: GovernanceConfig;
  /** "file": parsed from disk; "last-good"/"defaults": the file is broken or unreadable, see `problems`. */
  source: "file" | "last-good" | "defaults";
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  /** True when this call wrote the default file because none existed. */
  created: boolean;
}

/**
 * Reads the config file, creating it with DEFAULT_CONFIG_YAML when missing (S1-R02). Creation is atomic and never
 * overwrites: the text goes to a temp file that is hard-linked into place (fails if another process won the race),
 * falling back to an exclusive create where hard links are unsupported. A broken or unreadable file never stops the
 * plugin: it keeps running on `lastGood` (or the defaults) and reports the problems.
 */
export async function loadConfig(configFile: string, lastGood?: GovernanceConfig): Promise<LoadedConfig> {
  const fallback = (problems: ConfigProblem[], created = false): LoadedConfig => ({
    config: lastGood ?? DEFAULT_CONFIG,
    source: lastGood ? "last-good" : "defaults",
    problems,
    warnings: [],
    created,
  });
  const ioProblem = (error: unknown): ConfigProblem => ({ message: `${configFile}: ${(error as Error).message}`, line: null, column: null, path: "" });

  let created = false;
  let text: string;
  try {
    // `.opencode/` may be a symlink only if it stays inside the project: the config is never read or written elsewhere.
    checkOpencodeDir(path.dirname(configFile));
    text = await readRegularFile(configFile, MAX_CONFIG_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return fallback([ioProblem(error)]);
    try {
      created = await createExclusive(configFile, DEFAULT_CONFIG_YAML);
      text = await readRegularFile(configFile, MAX_CONFIG_BYTES);
    } catch (createError) {
      return fallback([ioProblem(createError)], created);
    }
  }
  const parsed = parseConfig(text);
  if (!parsed.ok) return fallback(parsed.problems, created);
  return { config: parsed.config, source: "file", problems: parsed.problems, warnings: parsed.warnings, created };
}

/** The config is a short hand-written file; a FIFO, device, symlink or anything larger than this is refused unread. */
export const MAX_CONFIG_BYTES = 256 * 1024;

/** Writes `text` to `file` only if it does not exist. Returns whether this call created it. */
async function createExclusive(file: string, text: string): Promise<boolean> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, text, { flag: "wx", mode: 0o644 });
  try {
    await link(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    try {
      await writeFile(file, text, { flag: "wx" });
      return true;
    } catch (fallbackError) {
      if ((fallbackError as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw fallbackError;
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
