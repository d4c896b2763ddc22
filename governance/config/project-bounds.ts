import { parseDuration } from "../time/time-format.ts";
import * as z from "../zod.ts";
import type { ConfigProblem, GovernanceConfig } from "./config-schema.ts";

/**
 * Which settings a repository's `.opencode/governance.yaml` may change, and how far (issue 20 §2). A cloned repository
 * is someone else's file: it may tighten governance freely, but the settings that weaken the user's OWN
 * record-keeping and control are taken from it only within safe bounds. Beyond them the bound applies and a problem
 * says so; the user's own config (`$XDG_CONFIG_HOME/opencode/governance.yaml`, {@link UserSettings}) may set them
 * freely within the schema. Pure: the caller reads the files.
 *
 * | setting | a project file may | only the user's config may |
 * |---|---|---|
 * | `enforcement` | `enforce` | `log-only` (enforcement off) |
 * | `audit.maxBytes` | 1 MiB (the default) or more | less than 1 MiB (down to 4 KiB) |
 * | `stop.deadline`, `stop.retryDeadline` | up to 60 s | longer (a stop that never escalates) |
 * | `stop.maxWait` | up to 120 s | longer (a lively session that never gets hard-stopped) |
 */
export const PROJECT_MIN_AUDIT_BYTES = 1_048_576;
export const PROJECT_MAX_STOP_DEADLINE_MS = 60_000;
export const PROJECT_MAX_STOP_WAIT_MS = 120_000;

const Ms = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const parsed = parseDuration(value);
  if (parsed.ok) return parsed.ms;
  ctx.addIssue({ code: "custom", message: parsed.reason });
  return z.NEVER;
});

/** The user-level file: only the guarded settings (everything else belongs in the project's file). */
export const UserSettings = z.strictObject({
  enforcement: z.enum(["enforce", "log-only"]).optional(),
  audit: z.strictObject({ maxBytes: z.number().int().min(4096).optional() }).optional(),
  stop: z
    .strictObject({
      deadline: Ms.optional(),
      retryDeadline: Ms.optional(),
      maxWait: Ms.optional(),
    })
    .optional(),
  /**
   * The guard on governance's control surfaces (key, state folder, CLI: docs/security.md) covers every subagent;
   * `rootSessions: true` extends it to root sessions (the agent the user talks to then cannot run the CLI or touch
   * the state folder with its tools either; the user still can, from a terminal or the dashboard). Only the user's
   * own file may set it: a repository must not be able to switch the user's own agent's tools on or off.
   */
  guard: z.strictObject({ rootSessions: z.boolean().optional() }).optional(),
});
export type UserSettings = z.infer<typeof UserSettings>;

const problem = (path: string, message: string): ConfigProblem => ({ message, line: null, column: null, path });

export function applyProjectBounds(config: GovernanceConfig, user: UserSettings = {}): { config: GovernanceConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  let enforcement = config.enforcement;
  if (user.enforcement) enforcement = user.enforcement;
  else if (enforcement === "log-only") {
    enforcement = "enforce";
    problems.push(
      problem(
        "enforcement",
        "enforcement: log-only is taken only from your user config ($XDG_CONFIG_HOME/opencode/governance.yaml), not from a project's file; enforcing",
      ),
    );
  }
  let maxBytes = config.audit.maxBytes;
  if (user.audit?.maxBytes !== undefined) maxBytes = user.audit.maxBytes;
  else if (maxBytes < PROJECT_MIN_AUDIT_BYTES) {
    problems.push(
      problem(
        "audit.maxBytes",
        `audit.maxBytes ${maxBytes} is below what a project's file may set (${PROJECT_MIN_AUDIT_BYTES}); using ${PROJECT_MIN_AUDIT_BYTES} (set a smaller size in your user config)`,
      ),
    );
    maxBytes = PROJECT_MIN_AUDIT_BYTES;
  }
  const deadline = (key: "deadline" | "retryDeadline" | "maxWait", max = PROJECT_MAX_STOP_DEADLINE_MS): number => {
    const own = user.stop?.[key];
    if (own !== undefined) return own;
    if (config.stop[key] <= max) return config.stop[key];
    problems.push(problem(`stop.${key}`, `stop.${key} above ${max / 1000}s is taken only from your user config; using ${max / 1000}s`));
    return max;
  };
  const stop = { deadline: deadline("deadline"), retryDeadline: deadline("retryDeadline"), maxWait: deadline("maxWait", PROJECT_MAX_STOP_WAIT_MS) };
  if (
    problems.length === 0 &&
    enforcement === config.enforcement &&
    maxBytes === config.audit.maxBytes &&
    stop.deadline === config.stop.deadline &&
    stop.retryDeadline === config.stop.retryDeadline &&
    stop.maxWait === config.stop.maxWait
  ) {
    return { config, problems };
  }
  return { config: { ...config, enforcement, audit: { ...config.audit, maxBytes }, stop: { ...config.stop, ...stop } }, problems };
}
