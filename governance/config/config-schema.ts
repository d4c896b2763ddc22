import * as z from "../zod.ts";
import { DEFAULT_AGENTS } from "./config-defaults.ts";
import { parseDuration } from "../time/time-format.ts";
import { BudgetConfig, ConcurrencyConfig, LoopConfig } from "./budget-config.ts";

/**
 * What governance.yaml may say: the schema, its defaults and the shape of a parse. Loading (files, the user's own
 * bounds) is config.ts; parsing is config-parse.ts; both import this file and nothing imports them back.
 */

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

/** Extra HTTP headers of the OTLP export (an API key, a tenant), sent only to the endpoint of the same layer. */
export const TelemetryHeaders = z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "a header name: letters, digits and '-'"), z.string().max(4000));
export type TelemetryHeaders = z.infer<typeof TelemetryHeaders>;

/**
 * OpenTelemetry export (docs/observability.md). `auto` (the default) follows OpenCode's own switch: on when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own endpoint variable) is set. `endpoint` here turns it on too.
 * Off, the OpenTelemetry SDK is never loaded.
 */
export const TelemetryConfig = z.strictObject({
  enabled: z.union([z.literal("auto"), z.boolean()]).default("auto"),
  /** Taken only from the user's own file or the organisation's policy: a project's value is refused (policy-merge.ts). */
  endpoint: z.union([z.literal(""), z.string().regex(/^https?:\/\/[^\s]+$/, "telemetry.endpoint: an http(s) URL such as http://127.0.0.1:4318")]).default(""),
  /** Headers sent with `endpoint` (the same layer's); like the endpoint, never a project's. */
  headers: TelemetryHeaders.default(() => ({})),
  toolSpans: z.boolean().default(false),
  /** Free text (stop reasons, guidance previews, error text) in exported attributes; the user's or the organisation's choice only. */
  includeText: z.boolean().default(false),
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
  /**
   * Agent shell commands where no sandbox can run (bubblewrap missing, user namespaces off): `best-effort` runs them
   * with the in-process layers only (audited `confinement_unavailable` once); `required` refuses them (issue 41).
   */
  confinement: z.enum(["best-effort", "required"]).default("best-effort"),
  delegation: z.strictObject({ maxDepth: z.number().int().min(0, "maxDepth must be 0 or more").max(16).default(3) }).prefault({}),
  /** Agents named nowhere: leaves (decision 0024, seed 002 "unknown caller cannot spawn"). */
  defaultRole: AgentPolicy.prefault({ role: "leaf", mayDelegateTo: [] }),
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
  | {
      ok: true;
      config: GovernanceConfig;
      warnings: ConfigProblem[];
      problems: ConfigProblem[];
      /** What the file itself says (unknown keys removed, no defaults): which limits the project set (policy-merge.ts). */
      raw?: Record<string, unknown>;
    }
  | { ok: false; problems: ConfigProblem[] };
