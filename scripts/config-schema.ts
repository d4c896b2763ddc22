/**
 * The JSON Schema of `.opencode/governance.yaml` and the config reference of docs/user-guide.md, both derived from
 * the zod schema `GovernanceConfig` (zod 4's `z.toJSONSchema`, input side: what a user writes, defaults included),
 * so neither can say something the plugin does not do.
 *
 * The schema is draft-07 (what yaml-language-server and every editor's JSON language service read), strict like the
 * zod schema (`additionalProperties: false`: a typo'd key is flagged in the editor, as the plugin warns about it).
 * The descriptions live here, keyed by config path; `describedPaths` and `schemaPaths` let a test fail when a key is
 * added without a description or a description outlives its key.
 */
import { z } from "zod";
import { GovernanceConfig } from "../governance/config/config.ts";
import { HOOK_TIMEOUT, HooksConfig, MAX_ACTIONS_PER_EVENT } from "../governance/config/hooks-config.ts";
import { LayerSettings } from "../governance/config/layer-settings.ts";

type JsonSchema = {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  [k: string]: unknown;
};

const DURATION = 'A duration: "90s", "10m", "1h", "48h", "2d" (units combine: "1h30m") or a number of milliseconds.';

export const DESCRIPTIONS: Record<string, string> = {
  schemaVersion: "Format version of this file; leave it at 1.",
  language: "Languages every agent must use; kept through compaction.",
  "language.communication": "Language the agents use to talk to you.",
  "language.documents": "Language of the documents, comments and commit messages the agents write.",
  phase: "Project phase shown to every agent (free text, e.g. planning, implementation, release).",
  enforcement: "`enforce` blocks forbidden spawns; `log-only` lets them through and records a `delegation_blocked` audit event.",
  confinement:
    "Where no sandbox can run (bubblewrap missing, user namespaces off): `best-effort` runs agent shell commands with the in-process checks only; `required` refuses them. Set it in your user or organisation file; a project may only tighten.",
  delegation: "Delegation limits.",
  "delegation.maxDepth": "Deepest subagent allowed (a root session is depth 0). A spawn beyond it is refused with an EMERGENCY_HALT explanation.",
  defaultRole: "Policy of agents not listed under `agents` (OpenCode's built-ins such as build, plan, general, explore).",
  "defaultRole.role": "`primary` coordinates and never edits, `delegating` may spawn the agents it is allowed, `leaf` cannot delegate.",
  "defaultRole.mayDelegateTo": "Agent names or globs (`*` any, a leading `!` denies); the last matching entry wins; no match is denied.",
  agents: "Per-agent policy, by OpenCode agent name. Replaces the shipped hierarchy when present.",
  "agents.*": "One agent's policy.",
  "agents.*.role": "`primary`, `delegating` or `leaf`.",
  "agents.*.mayDelegateTo": "Agents this one may spawn: names or globs, `!name` denies, the last match wins. Ignored for leaves.",
  resume: "When a root session that comes back gets a resume context.",
  "resume.minIdle": `A session back after at least this long (or after an interruption) gets a resume context. ${DURATION}`,
  "resume.maxIdle": `After this long a session starts fresh and its old record is archived. ${DURATION}`,
  orphans: "Orphan detection.",
  "orphans.staleAfter": `A child still marked running with no activity for this long is reported as orphaned. ${DURATION}`,
  stop: "The stop ladder's deadlines.",
  "stop.deadline": `Time a stopped session has to make its next tool call before it is aborted through OpenCode's API. ${DURATION}`,
  "stop.retryDeadline": `Time an abort has to take effect before it is retried. ${DURATION}`,
  "stop.maxWait": `Longest a stopping session that keeps showing signs of life (streaming its final answer, ending its turn) is given before the hard stop. A project's own file may set at most 120s; longer only from your own config. ${DURATION}`,
  inject: "Guidance injected into a running subagent.",
  "inject.maxLength": "Longest guidance, in characters.",
  anchors: "Facts every agent must keep; critical and high ones survive compaction.",
  "anchors[]": "One anchor.",
  "anchors[].id": "Short id: 1-40 letters, digits, '.', '_' or '-'.",
  "anchors[].text": "The fact, at most 300 characters.",
  "anchors[].priority": "`critical`, `high` or `normal`; critical and high anchors are re-sent after compaction.",
  audit: "The audit log (.opencode/governance/audit.log).",
  "audit.maxBytes": "Size at which the audit log is rotated (3 rotated files are kept).",
  budgets: "Budgets per agent and per task tree; see docs/budgets.md. A missing key is no limit.",
  "budgets.warnAt": "Share of a budget (0.1-0.99) at which the session's next tool result says what is left; once per budget.",
  "budgets.default": "Limits of every subagent whose agent has no entry under `budgets.agents` (root sessions are not limited by it).",
  "budgets.agents": "Limits by OpenCode agent name; they replace `budgets.default` for that agent, root sessions included.",
  "budgets.agents.*": "One agent's limits.",
  "budgets.tree": "Limits of a whole task tree: a root session and all its subagents together (e.g. `{ cost: 2, activeTime: 30m }`).",
  ...limitDescriptions("budgets.default"),
  ...limitDescriptions("budgets.agents.*"),
  ...limitDescriptions("budgets.tree"),
  "budgets.project":
    "Caps on what the whole project spends per day and per week: every session of every OpenCode process in it, from OpenCode's own figures; days and weeks (ISO, Monday first) in your time zone. See docs/budgets.md.",
  "budgets.project.daily": "The project's cap for one day (e.g. `{ cost: 20 }`). `opencode-governance budget --project --add cost=5` raises today's.",
  "budgets.project.weekly": "The project's cap for one week. `opencode-governance budget --project --week --add cost=5` raises this week's.",
  "budgets.user": "Caps on what you spend across every project per day and per week; set them in your user config (a project may only tighten them).",
  "budgets.user.daily": "Your cap for one day across all projects. `opencode-governance budget --user --add cost=5` raises today's.",
  "budgets.user.weekly": "Your cap for one week across all projects (e.g. `{ cost: 50 }`). `budget --user --week --add …` raises this week's.",
  ...periodDescriptions("budgets.project.daily"),
  ...periodDescriptions("budgets.project.weekly"),
  ...periodDescriptions("budgets.user.daily"),
  ...periodDescriptions("budgets.user.weekly"),
  concurrency: "Running subagents at once (background ones included); one more is refused with a message the model can act on.",
  "concurrency.perParent": "Running subagents one session may have at once.",
  "concurrency.perProject": "Running subagents in the whole project (this OpenCode process) at once.",
  loops:
    "Loop guards: the same call with the same result again and again, or a short cycle (A-B, A-B-C) with unchanged results; paths, descriptions and numbers that jump at random or count the calls do not count as a change, a number that grows or falls from call to call (bytes, a percentage, a clock) does.",
  "loops.enabled": "Switch the loop guards on or off.",
  "loops.repeat": "Identical calls (same tool, same arguments) with identical results in a row that count as a loop.",
  "loops.pingPong": "Full cycles of 2 to 4 different calls (A-B, A-B-C, …) with unchanged results that count as a loop.",
  "loops.pollRepeat": "A poll that waits (sleep, a status call, a slow call, a long gap): unchanged results in a row that count as a loop.",
  "loops.pollWait": "A call that itself took this long waited.",
  "loops.pollGap": "A call this long after the previous result waited.",
  "loops.stopAfter": "Looping calls allowed after the notice before the stop ladder starts.",
  telemetry: "OpenTelemetry export of sessions (GenAI spans), governance decisions, metrics and audit events; see docs/observability.md.",
  "telemetry.enabled":
    "`auto`: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT`) is set, like OpenCode's own export, or when `endpoint` is set; `true` forces it on (default endpoint http://localhost:4318); `false` keeps the SDK unloaded.",
  "telemetry.endpoint":
    "OTLP/HTTP base URL (`/v1/traces`, `/v1/metrics`, `/v1/logs` are appended); empty = the `OTEL_EXPORTER_OTLP_*` variables. Taken only from your user config or the organisation's policy: a project's endpoint is refused (it would receive your credentials). A config endpoint gets only its own file's `headers`, never `OTEL_EXPORTER_OTLP_HEADERS`.",
  "telemetry.headers": "HTTP headers sent with `endpoint` (an API key, a tenant); only from your user config or the organisation's policy, like the endpoint.",
  "telemetry.headers.*": "One header's value.",
  "telemetry.includeText":
    "Free text (stop reasons, guidance previews, sanitizer notes) and the user name in `by` in exported attributes. Off by default; only your user config or the organisation's policy may turn it on.",
  "telemetry.toolSpans": "Also export an `execute_tool {tool}` span per tool call (tool name and call id only, never arguments or results).",
  "telemetry.exportTimeout": `Longest wait for the collector per export, retries included; what does not fit is dropped and reported once. ${DURATION}`,
};

/** The same ten limits under each budget object. */
function limitDescriptions(at: string): Record<string, string> {
  return {
    [`${at}.modelRequests`]: "Model requests (LLM steps).",
    [`${at}.toolCalls`]: "Tool calls.",
    [`${at}.activeTime`]: `Time spent working (busy), not waiting for you. Between 1s and 7d. ${DURATION}`,
    [`${at}.tokens`]: "All tokens: input + output + reasoning + cache read + cache write.",
    [`${at}.inputTokens`]: "Input tokens (not read from cache).",
    [`${at}.outputTokens`]: "Output tokens.",
    [`${at}.reasoningTokens`]: "Reasoning tokens.",
    [`${at}.cacheReadTokens`]: "Input tokens read from the provider's cache.",
    [`${at}.cacheWriteTokens`]: "Input tokens written to the provider's cache.",
    [`${at}.cost`]: "Cost in US dollars, as OpenCode computes it from the model's prices in its config; a provider without prices reports none.",
  };
}

/** The keys of a cap over time: what OpenCode reports (tool calls and active time are a session's, not a spend). */
function periodDescriptions(at: string): Record<string, string> {
  const all = limitDescriptions(at);
  delete all[`${at}.toolCalls`];
  delete all[`${at}.activeTime`];
  return all;
}

/** Walks a JSON schema node's children with their config paths (`a.b`, `agents.*`, `anchors[]`). */
function walk(node: JsonSchema, at: string, visit: (node: JsonSchema, path: string) => void): void {
  if (at) visit(node, at);
  for (const [key, child] of Object.entries(node.properties ?? {})) walk(child, at ? `${at}.${key}` : key, visit);
  if (node.additionalProperties && typeof node.additionalProperties === "object") walk(node.additionalProperties, `${at}.*`, visit);
  if (node.items?.type === "object") walk(node.items, `${at}[]`, visit);
}

function isDuration(node: JsonSchema): boolean {
  return Array.isArray(node.type) && node.type.includes("number") && node.type.includes("string");
}

/** Keys only the organisation's policy and the user's file have (not a project's governance.yaml). */
export const POLICY_ONLY_DESCRIPTIONS: Record<string, string> = {
  guard: "The guard on governance's control surfaces (key, state folder, CLI); see docs/security.md. Read from the user's own file.",
  "guard.rootSessions":
    "`true`: root sessions' tools are kept from governance's key, state folder and CLI too, as every subagent's always are (the user still acts from a terminal or the dashboard).",
  hooks:
    "Your own scripts on governance events (docs/hooks.md): an audit event type (`session_stopped`, `budget_exceeded`, `governance_gap`, …) to a command or a webhook. Read only from your own ~/.config/opencode/governance.yaml: in the organisation's policy it makes the file invalid, a project's file is told it is ignored.",
  "hooks.*": `One action (\`command:\` or \`url:\`) or a list of up to ${MAX_ACTIONS_PER_EVENT}, run in order for every audit line of this type.`,
};

/** The keys of a hook's action: inside the schema's `anyOf` (one action or a list), which the path walk does not enter. */
const HOOK_ACTION_DESCRIPTIONS: Record<string, string> = {
  command: "Run with `/bin/sh -c` as you, outside the agents' sandbox, in the project's folder; the event as JSON on its stdin.",
  url: "An http(s) URL; the event is POSTed to it as JSON (redirects are not followed). A token in the URL is never audited.",
  timeout: `A command still running then is killed, a webhook not answered then is abandoned: 100 ms to ${HOOK_TIMEOUT.max / 1000}s, default ${HOOK_TIMEOUT.default / 1000}s. ${DURATION}`,
};

const DURATION_PATTERN = "^\\s*(\\d+(\\.\\d+)?|(\\d+(\\.\\d+)?\\s*([mM][sS]|[sSmMhHdD])\\s*)+)$";

function describe(zodSchema: z.ZodType, descriptions: Record<string, string> = DESCRIPTIONS): JsonSchema {
  const schema = z.toJSONSchema(zodSchema, { io: "input", target: "draft-7", unrepresentable: "any" }) as JsonSchema;
  walk(schema, "", (node, path) => {
    const description = descriptions[path];
    if (description) node.description = description;
    if (isDuration(node)) {
      node.minimum = 0;
      node.pattern = DURATION_PATTERN;
    }
  });
  return schema;
}

/** Descriptions (and the duration pattern) on every hook action's keys, found through the `anyOf`s and the list. */
function describeHookActions(node: unknown): void {
  if (!node || typeof node !== "object") return;
  const n = node as JsonSchema;
  if (n.type === "object" && n.properties && ("command" in n.properties || "url" in n.properties)) {
    for (const [key, child] of Object.entries(n.properties)) {
      child.description = HOOK_ACTION_DESCRIPTIONS[key];
      if (isDuration(child)) Object.assign(child, { minimum: 0, pattern: DURATION_PATTERN });
    }
    return;
  }
  for (const child of [...((n.anyOf as unknown[]) ?? []), n.items]) describeHookActions(child);
}

/** The JSON Schema shipped as `schema/governance.schema.json`. */
export function buildSchema(): JsonSchema {
  const schema = describe(GovernanceConfig);
  return {
    $schema: schema.$schema,
    title: "opencode-governance: .opencode/governance.yaml",
    description: "Configuration of the opencode-governance OpenCode plugin. Every key is optional; an empty file means the defaults.",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}

/**
 * The JSON Schema of the organisation's policy and the user's own file (`schema/governance-policy.schema.json`): the
 * limits of governance.yaml, every key optional, each a ceiling over the layers below (docs/security.md).
 */
export function buildPolicySchema(): JsonSchema {
  // The user's file also holds `hooks` (hooks-config.ts), parsed apart from the ceilings (user-config.ts).
  const schema = describe(LayerSettings.extend({ hooks: HooksConfig.optional() }), { ...DESCRIPTIONS, ...POLICY_ONLY_DESCRIPTIONS });
  describeHookActions(schema.properties?.hooks?.additionalProperties);
  return {
    $schema: schema.$schema,
    title: "opencode-governance: organisation policy (/etc/opencode-governance/policy.yaml) and user file (~/.config/opencode/governance.yaml)",
    description:
      "Ceilings over every project's .opencode/governance.yaml: a project may only tighten what these set; the user's file also holds `hooks`. Every key is optional; an unknown key makes the organisation's file invalid (it then fails closed).",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}

export function schemaPaths(schema: JsonSchema = buildSchema()): string[] {
  const paths: string[] = [];
  walk(schema, "", (_node, path) => paths.push(path));
  return paths;
}

export const describedPaths = (): string[] => Object.keys(DESCRIPTIONS);

function typeOf(node: JsonSchema): string {
  if (isDuration(node)) return "duration";
  if (node.const !== undefined) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum) return node.enum.map((v) => `\`${String(v)}\``).join(" \\| ");
  if (node.type === "array") return node.items?.type === "object" ? "list of objects" : `list of ${String(node.items?.type ?? "values")}s`;
  if (node.type === "object") return node.properties ? "section" : "map";
  if (node.type === "integer") {
    const max = node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
    const range = node.minimum !== undefined && max !== undefined ? ` ${node.minimum}–${max}` : node.minimum !== undefined ? ` ≥ ${node.minimum}` : "";
    return `integer${range}`;
  }
  return String(node.type ?? "any");
}

function defaultOf(path: string, node: JsonSchema): string {
  if (node.default === undefined) return path.includes("[]") || path.includes("*") ? "" : "required";
  if (path === "agents") return "the shipped hierarchy (see the generated file)";
  if (typeof node.default === "object" && node.default !== null && !Array.isArray(node.default) && Object.keys(node.default).length === 0) return "";
  return `\`${typeof node.default === "string" ? node.default : JSON.stringify(node.default)}\``;
}

/** The config reference table in docs/user-guide.md (between the config-reference markers). */
export function renderReference(schema: JsonSchema = buildSchema()): string {
  const rows: string[] = ["| key | type | default | meaning |", "|---|---|---|---|"];
  walk(schema, "", (node, path) => {
    rows.push(`| \`${path}\` | ${typeOf(node)} | ${defaultOf(path, node)} | ${(node.description ?? "").replace(/\|/g, "\\|")} |`);
  });
  return rows.join("\n");
}

export const REFERENCE_START = "<!-- config-reference:start (generated by `npm run docs:config` from the zod schema; do not edit) -->";
export const REFERENCE_END = "<!-- config-reference:end -->";

/** `doc` with the text between the markers replaced by the current reference; throws when the markers are missing. */
export function withReference(doc: string, reference = renderReference()): string {
  const start = doc.indexOf(REFERENCE_START);
  const end = doc.indexOf(REFERENCE_END);
  if (start < 0 || end < start) throw new Error("config-reference markers not found");
  return `${doc.slice(0, start + REFERENCE_START.length)}\n${reference}\n${doc.slice(end)}`;
}
