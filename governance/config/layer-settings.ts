import * as z from "../zod.ts";
import { BudgetLimits, LoopWait, PeriodLimits } from "./budget-config.ts";
import { AgentRole, Duration, TelemetryHeaders } from "./config-schema.ts";

/**
 * What the organisation's policy file and the user's own file may say (docs/security.md "Three layers"): the limits
 * of governance.yaml, every key optional. A key a layer leaves out sets nothing; a key it sets is a ceiling that every
 * layer below it may only tighten (policy-merge.ts). Strict: an unknown key is a problem, as in the project's file.
 * Values are checked with the same bounds as the project's file (the same component schemas).
 */
const Partial = {
  agentPolicy: z.strictObject({ role: AgentRole.optional(), mayDelegateTo: z.array(z.string().min(1)).max(200).optional() }),
};

export const LayerSettings = z.strictObject({
  schemaVersion: z.literal(1).optional(),
  enforcement: z.enum(["enforce", "log-only"]).optional(),
  confinement: z.enum(["best-effort", "required"]).optional(),
  delegation: z.strictObject({ maxDepth: z.number().int().min(0).max(16).optional() }).optional(),
  defaultRole: Partial.agentPolicy.optional(),
  agents: z.record(z.string().min(1).max(100), Partial.agentPolicy).optional(),
  stop: z.strictObject({ deadline: Duration.optional(), retryDeadline: Duration.optional(), maxWait: Duration.optional() }).optional(),
  inject: z.strictObject({ maxLength: z.number().int().min(1).max(4000).optional() }).optional(),
  audit: z.strictObject({ maxBytes: z.number().int().min(4096).optional() }).optional(),
  budgets: z
    .strictObject({
      default: BudgetLimits.optional(),
      agents: z.record(z.string().min(1).max(100), BudgetLimits).optional(),
      tree: BudgetLimits.optional(),
      project: z.strictObject({ daily: PeriodLimits.optional(), weekly: PeriodLimits.optional() }).optional(),
      user: z.strictObject({ daily: PeriodLimits.optional(), weekly: PeriodLimits.optional() }).optional(),
    })
    .optional(),
  concurrency: z.strictObject({ perParent: z.number().int().min(1).max(100).optional(), perProject: z.number().int().min(1).max(1000).optional() }).optional(),
  loops: z
    .strictObject({
      enabled: z.boolean().optional(),
      repeat: z.number().int().min(2).max(50).optional(),
      pingPong: z.number().int().min(2).max(25).optional(),
      pollRepeat: z.number().int().min(3).max(100).optional(),
      pollWait: LoopWait("pollWait").optional(),
      pollGap: LoopWait("pollGap").optional(),
      stopAfter: z.number().int().min(1).max(50).optional(),
    })
    .optional(),
  telemetry: z
    .strictObject({
      enabled: z.union([z.literal("auto"), z.boolean()]).optional(),
      endpoint: z
        .union([z.literal(""), z.string().regex(/^https?:\/\/[^\s]+$/, "telemetry.endpoint: an http(s) URL such as http://127.0.0.1:4318")])
        .optional(),
      headers: TelemetryHeaders.optional(),
      toolSpans: z.boolean().optional(),
      includeText: z.boolean().optional(),
    })
    .optional(),
  /**
   * The guard on governance's control surfaces (key, state folder, CLI: docs/security.md) covers every subagent;
   * `rootSessions: true` extends it to root sessions (the agent the user talks to then cannot run the CLI or touch
   * the state folder with its tools either; the user still can, from a terminal or the dashboard). Read from the
   * user's own file (a project's file has no such key): a repository must not switch the user's own agent's tools.
   */
  guard: z.strictObject({ rootSessions: z.boolean().optional() }).optional(),
});
export type LayerSettings = z.infer<typeof LayerSettings>;
/** Kept for the callers of issue 27's `guard`: the user's file is one layer's settings. */
export type UserSettings = LayerSettings;

/** Where an effective setting came from, strongest first. `built-in`: the bound a project's file may not pass alone. */
export type LayerName = "organisation" | "user" | "project" | "built-in" | "default";

/** One layer as the merge sees it: its name, its file (for messages) and what it set. */
export type PolicyLayer = { name: "organisation" | "user" | "project"; file: string; settings: LayerSettings };

/** The top-level keys of governance.yaml that are limits (the rest — phase, language, anchors, resume — are the project's). */
export const LIMIT_KEYS = [
  "enforcement",
  "confinement",
  "delegation",
  "defaultRole",
  "agents",
  "stop",
  "inject",
  "audit",
  "budgets",
  "concurrency",
  "loops",
  "telemetry",
] as const;

/**
 * The limits a project's file sets itself (no defaults filled in), from its checked YAML data. Keys that are no
 * limit (`budgets.warnAt`, `telemetry.exportTimeout`) stay the project's and are left out here.
 */
export function projectSettings(raw: Record<string, unknown> | undefined): LayerSettings {
  if (!raw) return {};
  const picked: Record<string, unknown> = {};
  for (const key of LIMIT_KEYS) if (Object.hasOwn(raw, key) && raw[key] !== undefined && raw[key] !== null) picked[key] = structuredClone(raw[key]);
  for (const [top, key] of [
    ["budgets", "warnAt"],
    ["telemetry", "exportTimeout"],
  ] as const) {
    const obj = picked[top];
    if (obj && typeof obj === "object") delete (obj as Record<string, unknown>)[key];
  }
  const parsed = LayerSettings.safeParse(picked);
  return parsed.success ? parsed.data : {};
}
