import { stat } from "node:fs/promises";
import path from "node:path";
import { budgetLimitPath, type BudgetView, budgetView } from "../governance/budget/budget-view.ts";
import type { GovernanceConfig, LoadedConfig } from "../governance/config/config.ts";
import { sessionTree } from "../governance/session/session-tree.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { currentAuditType } from "../governance/storage/audit-names.ts";
import type { RecordTrust } from "../governance/storage/record-attestation.ts";
import { isRunningSession, sessionStatus } from "../governance/session/running.ts";
import { processGoneOf } from "./process-gone.ts";
import { type ControlContext, trustOf } from "../governance/stop/control-requests.ts";
import { checkLabels } from "../governance/texts/check-notes.ts";
import { CORE_LINE, type HostLine, hostToolName } from "../governance/host/host-lines.ts";
import { auditHost } from "./audit-host.ts";
import { capUseLine } from "../governance/budget/spend-notices.ts";
import { plainLine } from "../governance/text-safety/text-parts.ts";
import { readSpend } from "./spend-view.ts";
import { type AuditLine, auditDetail } from "./audit-detail.ts";
import { type RowFacts, rowFacts, treeBranches } from "./dashboard-rows.ts";
import { plainDeep, plainLines } from "./plain-text.ts";
import { type Resumable, resumableSessions } from "./resumable.ts";

/** One row of the session tree as the page shows it. `indent` comes from the walk (capped), not from `depth`. */
export type SessionRow = {
  sessionId: string;
  /** OpenCode's title of the session (what its TUI shows), or null before OpenCode names it. */
  title: string | null;
  parentId: string | null;
  agent: string | null;
  depth: number;
  indent: number;
  cycle: boolean;
  state: string;
  control: string;
  running: boolean;
  /** One word for where it stands (`sessionStatus`): running, stopping, idle, interrupted, stopped, completed … */
  status: string;
  createdAt: number;
  lastActivityAt: number;
  lastToolCall: { tool: string; summary: string; at: number } | null;
  toolCalls: number;
  /** When its work ended (completed, failed, stopped, deleted, orphaned), else null. */
  endedAt: number | null;
  /** Use against each budget (governance/budget/budget-view.ts); the tree's on a root. */
  budget: BudgetView;
  /** Written by this user's governance (governance/storage/record-attestation.ts); an unverified record is never `running`. */
  verified: boolean;
  /** The session checks' findings (texts/check-notes.ts `checkLabels`): a missed first action, stale-state warnings. */
  warnings: string[];
};

/** `title`: the session's, when the line names a session that has one. */
export type AuditRow = { at: number; type: string; sessionId: string | null; title: string | null; detail: string };

/** A governance event on a session's timeline (its start and end come from the row). */
export type TimelineMark = { at: number; sessionId: string; kind: MarkKind; type: string; detail: string };
type MarkKind = "stop" | "budget" | "loop" | "guidance" | "escape" | "end" | "refused";

/** Everything the page shows, sent whole on every change (small: a project has tens of sessions, not thousands). */
/**
 * A row as the page draws it: the tree's connectors before its title, since when it is in its state, the cause of a
 * stop or interruption, and what governance refused or dropped in it (cli/dashboard-rows.ts).
 */
export type DashboardRow = SessionRow & { branch: string } & RowFacts;

export type Snapshot = {
  now: number;
  sessions: DashboardRow[];
  resumable: Resumable[];
  audit: AuditRow[];
  /** Stops, budget and loop notices, guidance, Escapes and ends, per session, oldest first (the timeline). */
  marks: TimelineMark[];
  /** Rows left out past {@link MAX_ROWS}; records not written by this user's governance (listed after the others). */
  sessionsLeft: number;
  unverified: number;
  injectMaxLength: number;
  /** Share of a budget at which the session is warned (the bar turns amber). */
  budgetWarnAt: number;
  /** Today's and this week's spend against the caps over time (issue 44): the project's always, the user's where capped. */
  spend: Array<{ cap: string; text: string; spent: boolean }>;
  /** The OpenCode the plugin last started on here (its `host_detected` line, e.g. "OpenCode 2.0.15"), or null. */
  host: string | null;
};

/** The audit lines a timeline shows, by kind. Tool calls are not audited (the hot path writes nothing): rows carry their count and the last one. */
const MARK_KINDS: Record<string, MarkKind> = {
  stop_queued: "stop",
  stop_escalated: "stop",
  stop_level_delivered: "stop",
  session_stopped: "stop",
  session_hard_stopped: "stop",
  stop_failed: "stop",
  budget_warning: "budget",
  budget_exceeded: "budget",
  budget_raised: "budget",
  loop_detected: "loop",
  session_injected: "guidance",
  inject_dropped: "guidance",
  session_aborted: "escape",
  descendant_aborted: "escape",
  session_ended: "end",
  session_error: "end",
  delegation_blocked: "refused",
  emergency_halt: "refused",
  tool_blocked: "refused",
  spawn_refused_concurrency: "refused",
  spawn_refused_budget: "refused",
};
/** An abort governance sent for a stop (its hard abort, or the one after L3) is part of the stop, not an Escape. */
function markKind(type: string, event: Record<string, unknown>): MarkKind | undefined {
  if (type === "session_aborted" && (event.cause === "stop" || event.cause === "budget" || event.cause === "loop")) return "stop";
  if (type === "session_aborted" && event.cause === "host") return "end";
  return MARK_KINDS[type];
}
const MAX_MARKS = 500;
const MAX_ROWS = 500;

const AUDIT_TAIL = 30;

/** The session tree as rows (the shape of `sessions --json` and of the page), every string stripped of controls. */
export function sessionRows(
  records: readonly SessionRecord[],
  at: {
    config: Pick<GovernanceConfig, "budgets">;
    now: number;
    trust?: RecordTrust | undefined;
    origins?: Record<string, string>;
    /** Records whose OpenCode process is dead (cli/process-gone.ts): `orphaned`, never running. */
    processGone?: (r: SessionRecord) => boolean;
    /** The host line the tool names are said in: records keep the core's (`bash`, `task`); OpenCode 2 says `shell`. */
    hostLine?: HostLine;
  },
): SessionRow[] {
  const gone = at.processGone ?? (() => false);
  // Which layer set each limit (issue 30): looked up by the path configuredLimits took it from.
  const withOrigins = (r: SessionRecord, view: BudgetView): BudgetView => {
    if (!at.origins) return view;
    const origins = at.origins;
    const mark = (scope: "session" | "tree") => (l: BudgetView["session"][number]) => {
      const p = l.limit === null ? null : budgetLimitPath(at.config, r, scope, l.key);
      const from = p ? origins[p] : undefined;
      return from ? { ...l, from } : l;
    };
    return { ...view, session: view.session.map(mark("session")), tree: view.tree?.map(mark("tree")) ?? null };
  };
  const verified = (r: SessionRecord) => at.trust?.verified(r) ?? true;
  return plainDeep(
    sessionTree(records).map(({ record: r, indent, cycle }) => ({
      sessionId: r.sessionId,
      title: r.title ?? null,
      parentId: r.parentId,
      agent: r.agent,
      depth: r.depth,
      indent,
      cycle,
      state: r.state,
      control: r.control,
      running: isRunningSession(r) && verified(r) && !gone(r),
      status: sessionStatus(r, gone(r)),
      createdAt: r.createdAt,
      lastActivityAt: r.lastActivityAt,
      lastToolCall: r.lastToolCall
        ? { tool: hostToolName(at.hostLine ?? CORE_LINE, r.lastToolCall.tool), summary: r.lastToolCall.summary, at: r.lastToolCall.at }
        : null,
      toolCalls: r.counters.toolCalls,
      endedAt: r.end?.at ?? r.stoppedAt ?? null,
      budget: withOrigins(r, budgetView(r, at.config, at.now)),
      verified: verified(r),
      warnings: checkLabels(r, at.now, at.hostLine),
    })),
  );
}

/** Reads records, the config's resume window and the audit tail; every string is stripped of control characters. */
export async function buildSnapshot(ctx: ControlContext, config: () => Promise<LoadedConfig>): Promise<Snapshot> {
  const now = ctx.clock.now();
  const records = await ctx.store.list();
  const loaded = await config();
  // Records this user's governance did not write are never running; past MAX_ROWS (a flood of planted records)
  // the rows the user's own sessions need come first and the rest are counted.
  const trust = trustOf(ctx);
  const events = (await ctx.audit.read()) as AuditLine[];
  // The host the plugin last started on here: tool names as it offers them (`shell` on 2), its version in the header.
  const host = auditHost(events);
  const line = host?.line ?? CORE_LINE;
  const processGone = await processGoneOf(records);
  const rows = sessionRows(records, { config: loaded.config, now, trust, origins: loaded.policy.origins, processGone, hostLine: line });
  const kept = rows.length <= MAX_ROWS ? rows : [...rows.filter((r) => r.verified), ...rows.filter((r) => !r.verified)].slice(0, MAX_ROWS);
  const bySession = new Map<string, AuditLine[]>();
  for (const e of events) {
    if (typeof e.sessionId !== "string") continue;
    const list = bySession.get(e.sessionId);
    if (list) list.push(e);
    else bySession.set(e.sessionId, [e]);
  }
  const recordOf = new Map(records.map((r) => [r.sessionId, r]));
  const branches = treeBranches(kept.map((r) => r.indent));
  const sessions: DashboardRow[] = kept.map((row, i) => {
    const record = recordOf.get(row.sessionId)!;
    return { ...row, branch: branches[i]!, ...plainDeep(rowFacts(record, bySession.get(row.sessionId) ?? [])) };
  });
  const resumable = resumableSessions(records, {
    now,
    minIdleMs: loaded.config.resume.minIdle,
    maxIdleMs: loaded.config.resume.maxIdle,
    anchors: loaded.config.anchors,
    trust,
  });
  const shown = new Set(sessions.map((r) => r.sessionId));
  const titles = new Map(sessions.map((r) => [r.sessionId, r.title]));
  const marks: TimelineMark[] = [];
  for (const e of events) {
    const type = currentAuditType(e);
    const kind = markKind(type, e);
    if (kind && typeof e.sessionId === "string" && shown.has(e.sessionId)) marks.push({ at: e.at, sessionId: e.sessionId, kind, type, detail: auditDetail(e) });
  }
  const audit = events
    .slice(-AUDIT_TAIL)
    .reverse()
    .map((e) => ({
      at: e.at,
      type: currentAuditType(e),
      sessionId: typeof e.sessionId === "string" ? e.sessionId : null,
      title: typeof e.sessionId === "string" ? (titles.get(e.sessionId) ?? null) : null,
      detail: auditDetail(e),
    }));
  return {
    now,
    sessions,
    resumable: resumable.map((r) => ({ ...plainDeep(r), context: plainLines(r.context) })),
    audit: plainDeep(audit),
    marks: plainDeep(marks.slice(-MAX_MARKS)),
    sessionsLeft: rows.length - sessions.length,
    unverified: rows.filter((r) => !r.verified).length,
    // The inject box honours the configured limit (the server validates again with the same value).
    injectMaxLength: loaded.config.inject.maxLength,
    budgetWarnAt: loaded.config.budgets.warnAt,
    spend: spendLines(ctx, loaded.config, now),
    host: host ? plainLine(host.version ? `OpenCode ${host.version}` : `OpenCode ${host.line}`, 80) : null,
  };
}

/** The spend lines `status` prints, for the page; a ledger that cannot be read shows nothing rather than failing the page. */
function spendLines(ctx: ControlContext, config: GovernanceConfig, now: number): Snapshot["spend"] {
  try {
    const view = readSpend(path.dirname(path.dirname(ctx.paths.root)), config, now);
    return view.caps
      .filter((x) => x.cap.startsWith("project.") || Object.keys(x.limits).length > 0)
      .map((x) => ({
        cap: x.cap,
        text: plainLine(capUseLine(x), 300),
        spent: Object.entries(x.limits).some(([k, v]) => x.use[k as keyof typeof x.use] >= (v as number)),
      }));
  } catch {
    return [];
  }
}

/**
 * A cheap change signature of the governance folder: record writes are atomic renames into `sessions/` (they change
 * the folder's mtime), audit appends change the log's size. Polled on the server while a page is connected.
 */
export async function changeSignature(ctx: ControlContext): Promise<string> {
  const parts = await Promise.all(
    [ctx.paths.sessions, ctx.paths.auditLog, ctx.paths.configFile].map((p) =>
      stat(p).then(
        (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
        () => "-",
      ),
    ),
  );
  return parts.join("|");
}
