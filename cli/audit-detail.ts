import { isBudgetKey } from "../governance/config/budget-kinds.ts";
import { formatAmount } from "../governance/config/budget-units.ts";
import type { AuditEventType } from "../governance/storage/audit-log.ts";
import { currentAuditType } from "../governance/storage/audit-names.ts";

/**
 * What a person needs from one audit line, in words: the stop level and who asked, a child's outcome, why guidance was
 * dropped ("stop wins over inject"), the refusal's kind, a budget's figures. One function per event type, in a table
 * typed over every type the plugin writes, so a new type cannot be added without deciding what its line says
 * ({@link NO_DETAIL} when the type alone says it all). The dashboard's audit table and timeline tooltips read it.
 *
 * Lines are files anyone in the project can write: every field is read defensively (a missing or wrong-typed field is
 * left out, never a crash), and the result is cut to {@link MAX_DETAIL} characters.
 */
export type AuditLine = { type: string; at: number; sessionId?: string | undefined } & Record<string, unknown>;
type Detail = (e: AuditLine) => string;

/** The type's name says everything there is to say (a start without figures worth reading, say). */
export const NO_DETAIL = null;
export const MAX_DETAIL = 240;

const str = (e: AuditLine, k: string): string | null => {
  const v = e[k];
  return typeof v === "string" && v !== "" ? v : null;
};
const num = (e: AuditLine, k: string): number | null => {
  const v = e[k];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
};
const list = (e: AuditLine, k: string): unknown[] => {
  const v = e[k];
  return Array.isArray(v) ? v : [];
};
/** The parts that are present, joined; absent ones (null, "") are left out. */
const join = (...parts: (string | null | false | undefined)[]): string => parts.filter((p): p is string => typeof p === "string" && p !== "").join(" · ");
const quoted = (v: string | null): string | null => (v === null ? null : `“${v.length > 120 ? `${v.slice(0, 119)}…` : v}”`);
const level = (v: number | null): string | null => (v === null ? null : `L${v}`);
const levels = (v: unknown[]): string | null => (v.length === 0 ? null : v.map((l) => `L${String(l)}`).join("→"));

/** Durations as people read them: "40s", "3 min", "2.5 h", "2 d". */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 2 * 86_400) return `${Math.round(s / 360) / 10} h`;
  return `${Math.round(s / 8640) / 10} d`;
}
const duration = (v: number | null): string | null => (v === null ? null : shortDuration(v));

/** Who asked, in the user's words: `dashboard:alice` → "the dashboard (alice)", `agent:coordinator` → "agent coordinator". */
export function requester(by: string | null): string | null {
  if (by === null) return null;
  if (by === "governance") return "governance";
  const [surface, ...rest] = by.split(":");
  const who = rest.join(":");
  if (surface === "dashboard" || surface === "cli") return `the ${surface === "cli" ? "CLI" : "dashboard"}${who ? ` (${who})` : ""}`;
  if (surface === "agent") return `agent ${who}`;
  return by;
}

/** "toolCalls 1000/1000" with each key's unit (activeTime in minutes, cost in dollars). */
function figure(e: AuditLine): string | null {
  const key = str(e, "key");
  const used = num(e, "used");
  const limit = num(e, "limit");
  if (key === null || used === null || limit === null) return key;
  if (!isBudgetKey(key)) return `${key} ${used}/${limit}`;
  return `${key} ${formatAmount(key, used, limit)}/${formatAmount(key, limit, limit)}`;
}

/** Why a delegation was refused, in words (governance/delegation/delegation-policy.ts `SpawnRefusal`). */
const REFUSALS: Record<string, string> = {
  leaf: "a leaf agent may not delegate",
  not_allowed: "target not in its allow-list",
  max_depth: "beyond the maximum depth",
  not_own_subagent: "task_id names a session that is not its own subagent",
  stopped_subagent: "task_id names a subagent a stop ended",
  not_named: "not named in governance.yaml (the lines to add are in the toast and `doctor`)",
};
function refusal(e: AuditLine): string {
  const kind = str(e, "kind");
  const caller = str(e, "callerAgent") ?? "?";
  const target = str(e, "targetAgent") ?? "?";
  return join(
    `${caller} → ${target}${str(e, "continues") ? ` (task_id ${str(e, "continues")})` : ""}`,
    kind === null ? null : (REFUSALS[kind] ?? kind),
    e.enforced === false ? "log-only: allowed anyway" : null,
  );
}

/** How a stop became final (governance/session/session-record.ts `NoticeHow`). */
const STOP_HOW: Record<string, string> = {
  ladder: "after L3",
  "hard-stop": "hard abort (no tool result before the deadline)",
  compliance: "it ended its turn",
  "user-abort": "aborted by Escape or another client while stopping",
};
/** Who aborted a session (governance/session/stop-origin.ts `AbortCause`, plus the machine's `cascade` and `host`). */
export const ABORT_CAUSES: Record<string, string> = {
  user: "Escape (or another client's abort)",
  stop: "aborted by governance for its stop",
  budget: "aborted by governance for a budget's stop",
  loop: "aborted by governance for the loop guard's stop",
  cascade: "its parent was interrupted",
  host: "the host ended the turn",
};

export const AUDIT_DETAILS = {
  plugin_started: (e) =>
    join(num(e, "pid") === null ? null : `pid ${num(e, "pid")}`, num(e, "host") === null ? null : `OpenCode ${num(e, "host")}`, str(e, "hostVersion")),
  session_created: (e) =>
    join(`depth ${num(e, "depth") ?? "?"}`, str(e, "parentId") ? `child of ${str(e, "parentId")}` : "root", e.parentKnown === false ? "parent unknown" : null),
  state_transition: (e) => join(`${str(e, "from") ?? "?"} → ${str(e, "to") ?? "?"}`, str(e, "on") ? `on ${str(e, "on")}` : null),
  session_resumed: (e) =>
    join(
      `idle ${duration(num(e, "idleMs")) ?? "?"}`,
      e.cutOffByCrash === true ? "cut off by a crash" : e.interrupted === true ? "was interrupted" : null,
      str(e, "previousState") ? `was ${str(e, "previousState")}` : null,
    ),
  stop_queued: (e) => join(level(num(e, "level")), `by ${requester(str(e, "by")) ?? "?"}`, quoted(str(e, "reason"))),
  session_aborted: (e) => join(ABORT_CAUSES[str(e, "cause") ?? ""] ?? str(e, "cause"), str(e, "from") ? `in ${str(e, "from")}` : null),
  session_compacted: (e) => join(str(e, "trigger"), num(e, "count") === null ? null : `compaction ${num(e, "count")}`),
  delegation_blocked: refusal,
  emergency_halt: (e) => join(refusal(e), num(e, "childDepth") === null ? null : `child depth ${num(e, "childDepth")}`),
  child_linked: (e) => join(str(e, "childId"), str(e, "agent"), str(e, "via") === "late_created" ? `linked late to ${str(e, "parentId") ?? "?"}` : null),
  child_closed: (e) => join(str(e, "childId"), str(e, "outcome") ?? "closed"),
  session_stop_requested: (e) => join(`${level(num(e, "level")) ?? "stop"} taken`, `by ${requester(str(e, "by")) ?? "?"}`, quoted(str(e, "reason"))),
  stop_escalated: (e) => join(`${level(num(e, "from")) ?? "?"} → ${level(num(e, "to")) ?? "?"}`, `by ${requester(str(e, "by")) ?? "?"}`),
  stop_level_delivered: (e) => `${level(num(e, "delivered")) ?? "a level"} delivered on a tool result`,
  session_stopped: (e) =>
    join(
      STOP_HOW[str(e, "how") ?? ""] ?? str(e, "how"),
      e.origin === "governance" ? "asked by governance" : "asked by the user",
      levels(list(e, "delivered")),
      quoted(str(e, "reason")),
    ),
  session_hard_stopped: (e) => `no tool result before the deadline: aborted (attempt ${num(e, "attempt") ?? "?"})`,
  stop_failed: (e) => `still running after ${num(e, "attempts") ?? "?"} aborts`,
  session_injected: (e) => join(quoted(str(e, "preview")), `from ${requester(str(e, "by")) ?? "?"}`),
  parent_notified: (e) =>
    join(`about ${str(e, "childId") ?? "?"}`, STOP_HOW[str(e, "how") ?? ""] ?? str(e, "how"), e.ok === false ? "notice not delivered" : null),
  orphan_closed: (e) => join(`parent ${str(e, "parentId") ?? "?"}`, `silent for ${duration(num(e, "staleForMs")) ?? "?"}`),
  config_problem: (e) =>
    join(`${str(e, "file") ?? "config"}${num(e, "line") === null ? "" : `:${num(e, "line")}:${num(e, "column") ?? 0}`}`, str(e, "message")),
  config_agents_named: (e) => join(str(e, "file"), Array.isArray(e.agents) ? `the project's agents named: ${e.agents.map(String).join(", ")}` : null),
  config_loaded: (e) => join(str(e, "file"), e.created === true ? "created with defaults" : null),
  policy_ceiling: (e) => `${num(e, "count") ?? "?"} value(s) refused by a ceiling`,
  store_problem: (e) => join(str(e, "kind"), str(e, "file"), str(e, "reason")),
  hook_error: (e) => join(str(e, "hook"), str(e, "message")),
  host_limit_raised: (e) => `${str(e, "setting") ?? "?"} ${String(e.from ?? "?")} → ${String(e.to ?? "?")}`,
  illegal_transition: (e) => join(str(e, "event"), str(e, "reason")),
  compaction_context_added: (e) => `${num(e, "lines") ?? "?"} lines`,
  descendants_interrupted: (e) => `${num(e, "count") ?? "?"} running descendant(s) cut off`,
  descendant_aborted: (e) => `its root ${str(e, "rootId") ?? "?"} was interrupted`,
  resume_offered: (e) => `${num(e, "count") ?? "?"} resumable session(s) offered at start: opencode -s ${str(e, "sessionId") ?? "?"}`,
  session_expired: (e) => join(`idle ${duration(num(e, "idleMs")) ?? "?"}`, "past the resume window: started fresh"),
  session_error: (e) => join(str(e, "message"), str(e, "state") ? `in ${str(e, "state")}` : null),
  phase_changed: (e) => `${str(e, "from") ?? "?"} → ${str(e, "to") ?? "?"}`,
  first_action_missed: (e) => join(str(e, "agent"), str(e, "tool") ? `${str(e, "tool")} first` : null, str(e, "role")),
  state_stale: (e) => join(str(e, "kind"), str(e, "agent")),
  resume_context_skipped: (e) => join(str(e, "rule"), num(e, "level") === null ? null : `level ${num(e, "level")} gets no resume context`),
  inject_queued: (e) => join(quoted(str(e, "preview")), `by ${requester(str(e, "by")) ?? "?"}`),
  inject_dropped: (e) => join(`${num(e, "count") ?? "?"} guidance dropped`, str(e, "because")),
  tool_blocked: (e) => join(str(e, "tool"), str(e, "reason") === "session_stopped" ? "the session is stopped" : str(e, "reason")),
  stop_ignored: (e) => join(`${num(e, "count") ?? "?"} stop(s) ignored`, str(e, "because")),
  steer_refused: (e) => join(str(e, "action"), str(e, "agent") ? `by ${str(e, "agent")}` : null, "only a primary agent may steer"),
  directive_rejected: (e) => join(str(e, "reason"), str(e, "directiveId") ?? str(e, "file")),
  host_detected: (e) => `OpenCode ${num(e, "line") ?? "?"} ${str(e, "version") ?? ""}`.trim(),
  host_unsupported: (e) => join(str(e, "version"), str(e, "oldestSupported") ? `oldest supported ${str(e, "oldestSupported")}` : null),
  host_notice: (e) => str(e, "message") ?? "",
  governance_gap: (e) => join(str(e, "missing") ? `missing ${str(e, "missing")}` : null, str(e, "hostVersion")),
  session_ended: (e) => join(str(e, "how"), str(e, "detail"), e.wasStopping === true ? "while stopping" : null),
  session_rehosted: (e) => (num(e, "pid") === null ? "" : `now hosted by pid ${num(e, "pid")}`),
  session_released: (e) => join(`${str(e, "was") ?? "?"} → ${str(e, "now") ?? "?"}`, e.cutOff === true ? "cut off by the process exit" : "process exit"),
  note_dropped: (e) => join(`${num(e, "count") ?? "?"} note(s) dropped`, str(e, "because")),
  maintenance_swept: (e) =>
    join(
      ...["archived", "recovered", "orphaned", "queues", "pruned"].map((k) => {
        const n = num(e, k);
        return n ? `${n} ${k}` : null;
      }),
    ),
  budget_warning: (e) => join(str(e, "scope"), figure(e)),
  budget_exceeded: (e) => join(str(e, "scope"), figure(e)),
  budget_raised: (e) => {
    const add = e.add && typeof e.add === "object" ? Object.entries(e.add as Record<string, unknown>).map(([k, v]) => `+${String(v)} ${k}`) : [];
    return join(
      str(e, "scope"),
      add.join(", "),
      str(e, "by") ? `by ${requester(str(e, "by"))}` : null,
      str(e, "stage"),
      e.stillOver === true ? "still over" : null,
    );
  },
  budget_cost_unreported: (e) => join(str(e, "scope"), "the provider reports no prices: the cost limit cannot be checked"),
  budget_resumed: (e) => join(str(e, "scope"), "back under the limit"),
  spawn_refused_concurrency: (e) =>
    join(`${num(e, "running") ?? "?"} running, limit ${num(e, "limit") ?? "?"}`, str(e, "scope"), str(e, "targetAgent") ? `→ ${str(e, "targetAgent")}` : null),
  spawn_refused_budget: (e) =>
    join(
      str(e, "scope"),
      `${str(e, "key") ?? "?"} ${num(e, "used") ?? "?"} of ${num(e, "limit") ?? "?"}`,
      str(e, "targetAgent") ? `→ ${str(e, "targetAgent")}` : null,
    ),
  loop_detected: (e) =>
    join(
      str(e, "tool"),
      `${num(e, "count") ?? "?"} times`,
      str(e, "shape"),
      str(e, "stage") === "stop" ? "stopped" : str(e, "stage") === "notice" ? "noticed" : null,
    ),
  telemetry_started: (e) => join(str(e, "traces") ? `traces to ${str(e, "traces")}` : null, str(e, "source") ? `from ${str(e, "source")}` : null),
  telemetry_stopped: (e) => str(e, "reason") ?? "",
  telemetry_export_failed: (e) => join(str(e, "signal"), str(e, "reason")),
  control_refused: (e) =>
    str(e, "surface") === "protected"
      ? join(str(e, "tool"), str(e, "path") ? `on ${str(e, "path")}` : null, "a protected path (confinement)")
      : join(str(e, "command") ?? str(e, "tool"), str(e, "via") ? `via ${str(e, "via")}` : null, "a governed agent may not steer"),
  record_tampered: (e) =>
    join(
      str(e, "reason") === "unreadable" ? "record undecodable or missing: restored whole, the bad file kept in quarantine" : null,
      str(e, "reason") === "host_rewritten" ? "another host written in: this process still runs it" : null,
      `fields restored: ${list(e, "fields").map(String).join(", ")}`,
    ),
  stop_covered: (e) =>
    join(
      `request ${str(e, "requestId") ?? "?"} (level ${num(e, "level") ?? "?"})`,
      `covered by the stop under way (next level ${num(e, "pendingLevel") ?? "?"})`,
    ),
  ceiling_kept: (e) => join(str(e, "layer"), str(e, "reason"), "the last good ceilings stay in force in this process"),
  directive_replayed: (e) => join(str(e, "kind"), str(e, "directiveId")),
  key_redacted: (e) => join(str(e, "tool"), `${num(e, "count") ?? "?"} key(s) redacted`),
  confinement_unavailable: (e) =>
    join(
      `no sandbox for agent shell commands: ${str(e, "why") ?? "?"}`,
      e.required === true ? "commands refused (confinement: required)" : "best-effort layers only",
      str(e, "install") ? `install: ${str(e, "install")}` : null,
    ),
  hook_failed: (e) =>
    join(
      `${str(e, "target") === "url" ? "webhook" : "command"} ${num(e, "action") === null ? "" : `#${(num(e, "action") ?? 0) + 1} `}on ${str(e, "event") ?? "?"}`,
      HOOK_WHY[str(e, "why") ?? ""] ?? str(e, "why"),
      num(e, "status") === null ? null : `HTTP ${num(e, "status")}`,
      num(e, "exitCode") === null ? null : `exit code ${num(e, "exitCode")}`,
      num(e, "ms") === null ? null : `after ${duration(num(e, "ms"))}`,
    ),
} as const satisfies Record<AuditEventType, Detail | typeof NO_DETAIL>;

/** Why a user's hook failed (governance/user-hooks/hook-plan.ts `HookOutcome`). */
const HOOK_WHY: Record<string, string> = {
  timeout: "timed out: killed",
  exit: "the command failed",
  signal: "the command was killed by a signal",
  spawn: "the command could not start",
  http: "the webhook answered with an error",
  network: "the webhook could not be reached",
  dropped: "dropped: too many events waiting for this hook",
};

/**
 * The line's detail in words. A type this build does not know (written by a newer one) shows its fields as
 * `key=value`, so nothing is hidden.
 */
export function auditDetail(event: AuditLine): string {
  const type = currentAuditType(event);
  const detail = (AUDIT_DETAILS as Record<string, Detail | null>)[type];
  let text: string;
  try {
    text = detail === undefined ? fieldsOf(event) : detail === null ? "" : detail(event);
  } catch {
    text = fieldsOf(event);
  }
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL - 1)}…` : text;
}

function fieldsOf(event: AuditLine): string {
  const { at: _at, type: _type, sessionId: _s, ...rest } = event;
  return Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`.slice(0, 80))
    .join(" ");
}
