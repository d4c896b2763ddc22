import type { CapInput } from "../../governance/budget/spend-caps.ts";
import { PERIOD_KEYS } from "../../governance/config/budget-config.ts";
import { keysOfUnit } from "../../governance/config/budget-kinds.ts";
import type { LoadedConfig } from "../../governance/config/config.ts";
import { agentRoleLines, agentRoles } from "../agent-roles.ts";
import { HOOKS_SHOWN_WHY, hookLines } from "../hooks-view.ts";
import { readConfig } from "../read-config.ts";
import { readSpend } from "../spend-view.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

/**
 * One effective setting and the layer it came from (`organisation`, `user`, `project`, `built-in`, `default`);
 * `raisedTo`: a cap over time that `budget --add` raised in the current day or week, and what it is now.
 */
export type ExplainedSetting = { path: string; value: unknown; from: string; raisedTo?: number };

/** A cap over time's path (`budgets.project.daily.cost`), split; null for any other path. */
const CAP_PATH = /^budgets\.(project|user)\.(daily|weekly)\.([A-Za-z]+)$/;

/**
 * Whether a path is a setting at all: a cap over time has only the spend keys (docs/budgets.md: tool calls and active
 * time are a session's matter), although the policy merge records an origin for every budget key.
 */
function isSetting(path: string): boolean {
  const cap = CAP_PATH.exec(path);
  return !cap || (PERIOD_KEYS as readonly string[]).includes(cap[3] as string);
}

/** Settings held in milliseconds: the stop ladder's and telemetry's waits, the idle bounds and every duration budget kind. */
const MS = new RegExp(`(deadline|retryDeadline|maxWait|${keysOfUnit("ms").join("|")}|exportTimeout|minIdle|maxIdle|staleAfter)$`);

function leaves(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (value && typeof value === "object" && !Array.isArray(value) && !(prefix === "telemetry.headers")) {
    for (const [k, v] of Object.entries(value)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, value);
}

/**
 * Every effective setting with the layer that set it (issue 30). Limits carry the merge's origin; the rest (phase,
 * language, anchors, resume, …) are the project file's (or the defaults'). Header VALUES never appear: names only.
 */
export function explainSettings(loaded: LoadedConfig, caps: readonly CapInput[] = []): ExplainedSetting[] {
  const values = new Map<string, unknown>();
  leaves(loaded.config, "", values);
  for (const path of Object.keys(loaded.policy.origins)) if (!values.has(path)) values.set(path, undefined);
  const projectOwn = loaded.source === "defaults" ? "default" : "project";
  return [...values.entries()]
    .filter(([path]) => path !== "schemaVersion" && isSetting(path))
    .map(([path, value]) => {
      const raisedTo = raisedLimit(path, value, caps);
      return {
        path,
        value: path === "telemetry.headers" ? Object.keys((value ?? {}) as object) : value === undefined ? null : value,
        from: loaded.policy.origins[path] ?? (path === "telemetry.headers" ? (loaded.policy.origins["telemetry.endpoint"] ?? "default") : projectOwn),
        ...(raisedTo !== undefined ? { raisedTo } : {}),
      };
    })
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** The cap's limit now, when raises made it differ from the configured value. */
function raisedLimit(path: string, value: unknown, caps: readonly CapInput[]): number | undefined {
  const m = CAP_PATH.exec(path);
  if (!m || typeof value !== "number") return undefined;
  const now = caps.find((c) => c.cap === `${m[1]}.${m[2]}`)?.limits[m[3] as (typeof PERIOD_KEYS)[number]];
  return now !== undefined && now !== value ? now : undefined;
}

function show(path: string, value: unknown, raisedTo?: number): string {
  if (raisedTo !== undefined) return `${show(path, value)}, raised ${path.includes(".daily.") ? "today" : "this week"} to ${show(path, raisedTo)}`;
  if (value === null) return "no limit";
  if (typeof value === "number" && MS.test(path)) return `${value / 1000}s`;
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(", ")}]`;
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** `status --explain [--json]`: the three layers, every effective setting and where it came from, every refused loosening. */
export async function explainCommand(c: CommandContext): Promise<number> {
  const loaded = await readConfig(c.store.paths.configFile);
  const settings = explainSettings(loaded, readSpend(c.dir, loaded.config, c.control.clock.now()).caps);
  const agents = await agentRoles(c.dir, c.store.paths.configFile, loaded.config);
  const layers = {
    organisation: { file: loaded.policy.org.file, source: loaded.policy.org.source },
    user: { file: loaded.policy.userFile },
    project: { file: c.store.paths.configFile, source: loaded.source },
  };
  if (c.options.json) {
    c.io.json({
      version: JSON_VERSION,
      project: c.dir,
      layers,
      settings,
      agents,
      hooks: hookLines(loaded.hooks),
      refused: loaded.policy.refused.map(({ path, layer, value, ceiling, ceilingLayer, message }) => ({ path, layer, value, ceiling, ceilingLayer, message })),
      problems: loaded.problems.map((p) => ({ path: p.path, line: p.line ?? null, column: p.column ?? null, message: p.message })),
    });
    return 0;
  }
  const org = loaded.policy.org.source;
  c.io.line(["bold", "organisation: "], `${layers.organisation.file} `, org === "lockdown" || org === "last-good" ? ["red", `(${org})`] : `(${org})`);
  c.io.line(["bold", "user: "], layers.user.file);
  c.io.line(["bold", "project: "], `${layers.project.file} (${loaded.source})`);
  c.io.line(["bold", "effective settings:"]);
  const width = Math.min(48, Math.max(...settings.map((s) => s.path.length)));
  for (const s of settings) c.io.line(`  ${s.path.padEnd(width)}  ${show(s.path, s.value, s.raisedTo)}  `, ["dim", s.from]);
  const hooks = hookLines(loaded.hooks);
  c.io.line(["bold", "hooks (your own file): "], hooks.length > 0 ? ["dim", `(${HOOKS_SHOWN_WHY})`] : "none");
  for (const h of hooks) c.io.line(`  ${h}`);
  if (loaded.policy.refused.length > 0) c.io.line(["bold", "refused loosenings:"]);
  for (const r of loaded.policy.refused) c.io.line("  ", ["yellow", r.message]);
  const others = loaded.problems.filter((p) => !loaded.policy.refused.some((r) => r.message === p.message));
  for (const p of others) c.io.line(["bold", "problem: "], ["red", p.message]);
  c.io.line(["bold", "agents (role, targets, where the role came from):"]);
  for (const l of agentRoleLines(agents)) c.io.line(l);
  return 0;
}
