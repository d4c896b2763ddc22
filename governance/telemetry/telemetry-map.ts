import { cleanLine } from "../text-safety/untrusted-text.ts";

/**
 * What each audit event becomes in OpenTelemetry (docs/observability.md): a span event on the session's current
 * `invoke_agent` turn span and/or one count on a counter. Every audit event also becomes a log record; this table
 * adds the rest. ONE table, keyed by the audit type as a string, so a renamed or new audit type (h-core's stop
 * renames, h-budget's `budget_*`) is a one-line change here; test/governance/telemetry checks every key is a real
 * audit type (or listed as expected-but-optional).
 */
export type Counter =
  | "governance.stops"
  | "governance.spawn.halts"
  | "governance.spawn.refusals"
  | "governance.injects"
  | "governance.budget.breaches"
  | "governance.escapes"
  | "governance.hook.errors"
  /** Governance found itself not governing a session (issue 25 item 5): one per missing kind per session. */
  | "governance.coverage.gaps";

export type Attributes = Record<string, string | number | boolean>;

export type TelemetryMapping = {
  /** Span event name on the session's open turn span (none when the session has no open turn). */
  event?: string;
  /** The span event instead, when the same turn already carries a stop request (an abort that a stop caused). */
  eventAfterStop?: string;
  /** A counter incremented by one, with these attributes (low cardinality: never ids or free text). */
  count?: { metric: Counter; attrs: (data: Record<string, unknown>) => Attributes; when?: (data: Record<string, unknown>) => boolean };
};

const str = (v: unknown, fallback = "unknown"): string =>
  typeof v === "string" && v !== "" ? cleanLine(v, 40) : typeof v === "number" || typeof v === "boolean" ? String(v) : fallback;

export const TELEMETRY_MAP: Readonly<Record<string, TelemetryMapping>> = {
  session_stop_requested: {
    event: "governance.stop.requested",
    count: { metric: "governance.stops", attrs: (d) => ({ level: str(d.level), outcome: "requested", origin: str(d.origin, "user") }) },
  },
  stop_level_delivered: {
    event: "governance.stop.directive_delivered",
    count: { metric: "governance.stops", attrs: (d) => ({ level: str(d.delivered), outcome: "delivered" }) },
  },
  stop_escalated: {
    event: "governance.stop.escalated",
    count: { metric: "governance.stops", attrs: (d) => ({ level: str(d.to), outcome: "escalated" }) },
  },
  session_stopped: {
    event: "governance.stop.completed",
    count: { metric: "governance.stops", attrs: (d) => ({ level: "any", outcome: "stopped", how: str(d.how), origin: str(d.origin, "user") }) },
  },
  session_hard_stopped: {
    event: "governance.stop.hard_abort",
    count: { metric: "governance.stops", attrs: () => ({ level: "any", outcome: "hard_stopped" }) },
  },
  stop_failed: { event: "governance.stop.failed", count: { metric: "governance.stops", attrs: () => ({ level: "any", outcome: "failed" }) } },
  stop_ignored: { event: "governance.stop.ignored" },
  tool_blocked: { event: "governance.tool.blocked" },
  session_injected: { event: "governance.inject.delivered", count: { metric: "governance.injects", attrs: () => ({ outcome: "delivered" }) } },
  inject_dropped: { event: "governance.inject.dropped", count: { metric: "governance.injects", attrs: () => ({ outcome: "dropped" }) } },
  emergency_halt: {
    event: "governance.spawn.halted",
    count: { metric: "governance.spawn.halts", attrs: (d) => ({ reason: str(d.kind), enforced: d.enforced !== false }) },
  },
  delegation_blocked: {
    event: "governance.spawn.refused",
    count: { metric: "governance.spawn.refusals", attrs: (d) => ({ reason: str(d.kind), enforced: d.enforced !== false }) },
  },
  session_aborted: {
    event: "governance.escape",
    eventAfterStop: "governance.stop.aborted",
    // One count per Escape: not the abort of governance's own hard stop, not each descendant the Escape cut off.
    count: { metric: "governance.escapes", attrs: (d) => ({ from: str(d.from) }), when: (d) => d.cause === undefined || d.cause === "user" },
  },
  descendants_interrupted: { event: "governance.descendants_interrupted" },
  descendant_aborted: { event: "governance.descendant_aborted" },
  session_resumed: { event: "governance.resume" },
  session_expired: { event: "governance.resume.expired" },
  session_compacted: { event: "governance.compacted" },
  child_linked: { event: "governance.child.linked" },
  child_closed: { event: "governance.child.closed" },
  parent_notified: { event: "governance.parent_notified" },
  directive_rejected: { event: "governance.directive.rejected" },
  steer_refused: { event: "governance.steer.refused" },
  budget_warning: {
    event: "governance.budget.warning",
    count: { metric: "governance.budget.breaches", attrs: (d) => ({ kind: "warning", scope: str(d.scope), key: str(d.key) }) },
  },
  budget_exceeded: {
    event: "governance.budget.exceeded",
    count: { metric: "governance.budget.breaches", attrs: (d) => ({ kind: "exceeded", scope: str(d.scope), key: str(d.key) }) },
  },
  budget_raised: { event: "governance.budget.raised" },
  budget_cost_unreported: { event: "governance.budget.cost_unreported" },
  budget_resumed: { event: "governance.budget.resumed" },
  spawn_refused_concurrency: {
    event: "governance.spawn.refused",
    count: { metric: "governance.spawn.refusals", attrs: () => ({ reason: "concurrency", enforced: true }) },
  },
  spawn_refused_budget: {
    event: "governance.spawn.refused",
    count: { metric: "governance.spawn.refusals", attrs: (d) => ({ reason: "budget", enforced: true, scope: str(d.scope) }) },
  },
  loop_detected: { event: "governance.loop.detected" },
  hook_error: { count: { metric: "governance.hook.errors", attrs: (d) => ({ hook: str(d.hook) }) } },
  governance_gap: {
    event: "governance.coverage.gap",
    count: { metric: "governance.coverage.gaps", attrs: (d) => ({ missing: str(d.missing), host: str(d.host), host_version: str(d.hostVersion) }) },
  },
};

/** Keys of TELEMETRY_MAP that may not exist as audit types yet (another branch adds them). */
export const OPTIONAL_AUDIT_TYPES: readonly string[] = [];

/**
 * Audit data keys that may leave the machine, and nothing else. The rule: what `sessions` and the dashboard's audit
 * tail show (ids, agent, level, state, depth, who) — never file paths, error messages, tool arguments, the project
 * directory, the user name or the pid; free text (reason, preview) only on the user's opt-in. Strings are cleaned like the CLI's output (controls and invisible
 * characters removed, secrets redacted, one line) and clipped to 80 characters, the dashboard's length.
 */
const EXPORTED_KEYS: Readonly<Record<string, string>> = {
  sessionId: "gen_ai.conversation.id",
  parentId: "governance.parent_id",
  childId: "governance.child_id",
  rootId: "governance.root_id",
  requestId: "governance.request_id",
  injectId: "governance.inject_id",
  agent: "governance.agent",
  callerAgent: "governance.caller_agent",
  targetAgent: "governance.target_agent",
  level: "governance.level",
  depth: "governance.depth",
  callerDepth: "governance.caller_depth",
  childDepth: "governance.child_depth",
  state: "governance.state",
  previousState: "governance.previous_state",
  from: "governance.from",
  to: "governance.to",
  on: "governance.on",
  via: "governance.via",
  kind: "governance.kind",
  enforced: "governance.enforced",
  reason: "governance.reason",
  because: "governance.because",
  preview: "governance.preview",
  by: "governance.by",
  origin: "governance.origin",
  how: "governance.how",
  outcome: "governance.outcome",
  delivered: "governance.delivered",
  attempt: "governance.attempt",
  count: "governance.count",
  idleMs: "governance.idle_ms",
  interrupted: "governance.interrupted",
  trigger: "governance.trigger",
  tool: "governance.tool",
  hook: "governance.hook",
  rule: "governance.rule",
  action: "governance.action",
  scope: "governance.scope",
  key: "governance.budget.key",
  limit: "governance.limit",
  used: "governance.budget.used",
  add: "governance.budget.add",
  running: "governance.running",
  shape: "governance.loop.shape",
  stage: "governance.stage",
  signal: "governance.telemetry.signal",
  missing: "governance.coverage.missing",
  hostVersion: "governance.host.version",
};

const MAX_TEXT = 80;

function exportable(value: unknown): string | number | boolean | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "boolean") return value;
  if (typeof value === "string") return cleanLine(value, MAX_TEXT);
  if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number")) return cleanLine(value.join(","), MAX_TEXT);
  return undefined;
}

/**
 * Keys whose values are free text someone wrote — the user's stop reason, a sanitizer's note on guidance, a guidance
 * preview, an error message — exported only when the user's own config (or the organisation's) says
 * `telemetry.includeText: true` (issue 27 §3). Free text carries what nobody checked: paths, names, pasted secrets.
 */
export const FREE_TEXT_KEYS: ReadonlySet<string> = new Set(["reason", "because", "preview"]);

/** `by` is `cli:<user name>`, `dashboard:<user name>` or `agent:<name>`: only who KIND of actor leaves, never the user name. */
function actorKind(value: unknown): string | undefined {
  return typeof value === "string" ? (value.split(":")[0] ?? "").slice(0, 20) : undefined;
}

export type AttributeOptions = { includeText?: boolean };

/**
 * The redacted attributes of one audit event: whitelisted keys only, cleaned values, `governance.event` = its type;
 * free text only when asked for ({@link FREE_TEXT_KEYS}).
 */
export function auditAttributes(type: string, data: Record<string, unknown>, options: AttributeOptions = {}): Attributes {
  const out: Attributes = { "governance.event": cleanLine(type, 60) };
  for (const [key, value] of Object.entries(exportedFields(data, options))) out[EXPORTED_KEYS[key]!] = value;
  return out;
}

/**
 * The same rule under the audit line's own key names: what may leave the machine of one event's data (the user's
 * hooks send this: governance/user-hooks/hook-plan.ts).
 */
export function exportedFields(data: Record<string, unknown>, options: AttributeOptions = {}): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const key of Object.keys(EXPORTED_KEYS)) {
    if (!options.includeText && FREE_TEXT_KEYS.has(key)) continue;
    const raw = key === "by" && !options.includeText ? actorKind(data[key]) : data[key];
    const value = exportable(raw);
    if (value !== undefined && value !== "") out[key] = value;
  }
  return out;
}
