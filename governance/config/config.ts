import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import * as z from "../zod.ts";
import { DEFAULT_AGENTS, DEFAULT_CONFIG_YAML } from "./config-defaults.ts";
import { parseDuration } from "../time/time-format.ts";
import { checkOpencodeDir, readRegularFile } from "../storage/safe-fs.ts";
import { BudgetConfig, ConcurrencyConfig, LoopConfig } from "../budget/budget-config.ts";
import { applyProjectBounds } from "./project-bounds.ts";
import { loadUserSettings } from "./user-config.ts";

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

/**
 * OpenTelemetry export (docs/observability.md). `auto` (the default) follows OpenCode's own switch: on when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own endpoint variable) is set. `endpoint` here turns it on too.
 * Off, the OpenTelemetry SDK is never loaded.
 */
export const TelemetryConfig = z.strictObject({
  enabled: z.union([z.literal("auto"), z.boolean()]).default("auto"),
  endpoint: z.union([z.literal(""), z.string().regex(/^https?:\/\/[^\s]+$/, "telemetry.endpoint: an http(s) URL such as http://127.0.0.1:4318")]).default(""),
  toolSpans: z.boolean().default(false),
  exportTimeout: Duration.prefault("5s"),
});
export type TelemetryConfig = z.infer<typeof TelemetryConfig>;

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
  stop: z.strictObject({ deadline: Duration.prefault("5s"), retryDeadline: Duration.prefault("5s"), maxWait: Duration.prefault("60s") }).prefault({}),
  inject: z.strictObject({ maxLength: z.number().int().min(1).max(4000).default(500) }).prefault({}),
  anchors: z
    .array(Anchor)
    .max(MAX_ANCHORS, `at most ${MAX_ANCHORS} anchors: every one is re-sent to the model after each compaction`)
    .default(() => []),
  audit: z.strictObject({ maxBytes: z.number().int().min(4096).default(1_048_576) }).prefault({}),
  /** Budgets per agent and per task tree (docs/budgets.md). */
  budgets: BudgetConfig.prefault({}),
  /** Running subagents at once, per parent and per project. */
  concurrency: ConcurrencyConfig.prefault({}),
  /** Loop guards: the same call with the same result again and again, or A-B-A-B. */
  loops: LoopConfig.prefault({}),
  telemetry: TelemetryConfig.prefault({}),
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
export async function loadConfig(configFile: string, lastGood?: GovernanceConfig, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const loaded = await loadProjectConfig(configFile, lastGood);
  // The user's own settings win over the project's file; the project's file is bounded where it would weaken the
  // user's record-keeping (project-bounds.ts). Applied to every source, the defaults included.
  const user = await loadUserSettings(env);
  const bounded = applyProjectBounds(loaded.config, user.settings);
  const problems = [...user.problems, ...bounded.problems];
  return problems.length === 0 && bounded.config === loaded.config
    ? loaded
    : { ...loaded, config: bounded.config, problems: [...loaded.problems, ...problems] };
}

/**
 * A cheap, linear look at the text before the YAML parser (which is synchronous and would hold the host's event loop:
 * 25,000 keys took 21 s): a hand-written config has a few dozen entries, so more than {@link MAX_CONFIG_ENTRIES}
 * significant lines, or one longer than {@link MAX_CONFIG_LINE} characters (a flow mapping), is refused unparsed.
 */
export function configShapeProblem(text: string): string | null {
  let entries = 0;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    let i = start;
    while (i < end && (text[i] === " " || text[i] === "\t")) i++;
    if (i < end && text[i] !== "#" && text[i] !== "\r") {
      if (++entries > MAX_CONFIG_ENTRIES) return `the file has more than the ${MAX_CONFIG_ENTRIES} entries a governance config can have; refused unparsed`;
      if (end - i > MAX_CONFIG_LINE)
        return `line ${lineAt(text, start)} is ${end - i} characters long, more than the ${MAX_CONFIG_LINE} allowed; refused unparsed`;
    }
    start = end + 1;
  }
  return null;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

export const MAX_CONFIG_ENTRIES = 500;
export const MAX_CONFIG_LINE = 2_000;

async function loadProjectConfig(configFile: string, lastGood?: GovernanceConfig): Promise<LoadedConfig> {
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
  // The file as governance generates it needs no YAML parser: it is the defaults (test/governance/config checks
  // that they agree). Only an edited file loads the parser, on demand (docs/performance.md: yaml is ~2 MiB in the host).
  if (text === DEFAULT_CONFIG_YAML) return { config: DEFAULT_CONFIG, source: "file", problems: [], warnings: [], created };
  const shape = configShapeProblem(text);
  if (shape) return fallback([{ message: `${configFile}: ${shape}`, line: null, column: null, path: "" }], created);
  const { parseConfig } = await import("./config-parse.ts");
  const parsed = parseConfig(text);
  if (!parsed.ok) return fallback(parsed.problems, created);
  return { config: parsed.config, source: "file", problems: parsed.problems, warnings: parsed.warnings, created };
}

/**
 * The config is a short hand-written file (the generated one is 3.5 KB); a FIFO, device, symlink or anything larger
 * than this is refused unread. 64 KB of comments still parse in a few ms.
 */
export const MAX_CONFIG_BYTES = 64 * 1024;

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
