import { sessionStatus } from "../governance/session/running.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { BUDGET_STOP_PREFIX, GOVERNANCE_REQUESTER, LOOP_STOP_PREFIX } from "../governance/session/stop-origin.ts";
import { currentAuditType } from "../governance/storage/audit-names.ts";
import { ABORT_CAUSES, type AuditLine, auditDetail, requester } from "./audit-detail.ts";

/**
 * What a session's row says beyond its record's fields: since when it has been in its state (a stop's "stopping for"
 * counts from the stop's request, not from the session's start), the real cause of a stop or an interruption, and
 * what governance refused or dropped in it (a blocked delegation, guidance a stop overrode). Pure: the record and the
 * session's own audit lines in, words out.
 */

/** Who or what ended or is ending the session's work. `agent`: a primary agent's `governance_stop` tool. */
export type StopCause = "user" | "agent" | "budget" | "loop guard" | "Escape" | "parent" | "host";

export type RowNote = { kind: "stop" | "interrupted" | "blocked" | "dropped"; text: string };

export type RowFacts = {
  /** When the session entered the state its status word names (the start of "stopping for …"). */
  since: number;
  cause: StopCause | null;
  notes: RowNote[];
};

/** A stop's cause from its request: governance's own stops by their id, an agent's tool, else the user's CLI or dashboard. */
export function stopCause(stop: Pick<NonNullable<SessionRecord["stop"]>, "requestId" | "requestedBy">): StopCause {
  if (stop.requestId.startsWith(BUDGET_STOP_PREFIX)) return "budget";
  if (stop.requestId.startsWith(LOOP_STOP_PREFIX)) return "loop guard";
  if (stop.requestedBy.startsWith("agent:")) return "agent";
  return stop.requestedBy === GOVERNANCE_REQUESTER ? "budget" : "user";
}

/** `session_aborted.cause` as a {@link StopCause}: Escape, the parent's interruption, or the host. */
const ABORT_TO_CAUSE: Record<string, StopCause> = { user: "Escape", cascade: "parent", host: "host", budget: "budget", loop: "loop guard", stop: "user" };

function since(r: SessionRecord): number {
  switch (sessionStatus(r)) {
    case "stopping":
      return r.stop?.requestedAt ?? r.updatedAt;
    case "stopped":
      return r.stoppedAt ?? r.updatedAt;
    case "interrupted":
      return r.interruptedAt ?? r.updatedAt;
    case "idle":
      return r.idleAt ?? r.lastActivityAt;
    case "running":
      // The current turn: after the last idle (a root's earlier turns ended there) or resume, else the start.
      return Math.max(r.createdAt, r.idleAt ?? 0, r.resume?.at ?? 0);
    default:
      return r.end?.at ?? r.stoppedAt ?? r.updatedAt;
  }
}

const LEVELS = (delivered: readonly number[], next: number, stopping: boolean): string | null => {
  const told = delivered.length > 0 ? `L${delivered.join("→L")} delivered` : "no level delivered yet";
  return stopping ? `${told}, L${next} on its next tool result` : delivered.length > 0 ? told : null;
};

const CAUSE_WORDS: Record<StopCause, string> = {
  user: "the user",
  agent: "an agent",
  budget: "a budget",
  "loop guard": "the loop guard",
  Escape: "Escape",
  parent: "its parent",
  host: "the host",
};

/**
 * The row's facts. `events`: the session's own audit lines, oldest first (lines of other sessions are ignored, so a
 * caller may pass a superset).
 */
export function rowFacts(r: SessionRecord, events: readonly AuditLine[]): RowFacts {
  const own = events.filter((e) => e.sessionId === r.sessionId);
  const status = sessionStatus(r);
  const notes: RowNote[] = [];
  let cause: StopCause | null = null;
  const last = (type: string) => own.findLast((e) => currentAuditType(e) === type);

  if (r.stop && (status === "stopping" || status === "stopped")) {
    cause = stopCause(r.stop);
    const who = cause === "user" || cause === "agent" ? `${CAUSE_WORDS[cause]}, from ${requester(r.stop.requestedBy)}` : CAUSE_WORDS[cause];
    const stopped = status === "stopped" ? last("session_stopped") : undefined;
    const how = stopped ? auditDetail(stopped).split(" · ")[0] : null;
    const attempts = status === "stopping" && r.stop.abortAttempts > 0 ? `hard abort sent (attempt ${r.stop.abortAttempts})` : null;
    const parts = [
      `stop asked by ${who}`,
      r.stop.reason ? `“${r.stop.reason.slice(0, 120)}”` : null,
      LEVELS(r.stop.delivered, r.stop.nextLevel, status === "stopping"),
      attempts,
      how ? `ended: ${how}` : null,
    ];
    notes.push({ kind: "stop", text: parts.filter(Boolean).join(" · ") });
  } else if (status === "interrupted") {
    const aborted = own.findLast((e) => currentAuditType(e) === "session_aborted" || currentAuditType(e) === "descendant_aborted");
    if (aborted) {
      cause = currentAuditType(aborted) === "descendant_aborted" ? "parent" : (ABORT_TO_CAUSE[String(aborted.cause)] ?? null);
      const word = currentAuditType(aborted) === "descendant_aborted" ? ABORT_CAUSES.cascade : ABORT_CAUSES[String(aborted.cause)];
      notes.push({ kind: "interrupted", text: `interrupted: ${word ?? String(aborted.cause)}` });
    }
  }

  const refusals = own.filter((e) =>
    ["delegation_blocked", "emergency_halt", "spawn_refused_concurrency", "spawn_refused_budget"].includes(currentAuditType(e)),
  );
  const refused = refusals.at(-1);
  if (refused) {
    const what =
      currentAuditType(refused) === "emergency_halt" ? "emergency halt" : refused.enforced === false ? "delegation refused (log-only)" : "delegation blocked";
    const more = refusals.length > 1 ? ` (${refusals.length} refusals)` : "";
    notes.push({ kind: "blocked", text: `${what}: ${auditDetail(refused)}${more}` });
  }

  const dropped = own.filter((e) => currentAuditType(e) === "inject_dropped");
  if (dropped.length > 0) {
    const count = dropped.reduce((n, e) => n + (typeof e.count === "number" ? e.count : 1), 0);
    const because = [...new Set(dropped.map((e) => (typeof e.because === "string" ? e.because : "")).filter(Boolean))].join("; ");
    notes.push({ kind: "dropped", text: `${count} guidance dropped${because ? `: ${because}` : ""}` });
  }
  return { since: since(r), cause, notes };
}

/**
 * Tree connectors for rows in tree order (each row's `indent`, a root at 0): "├─ " before a child with a later
 * sibling, "└─ " before the last, and "│  " under an ancestor whose siblings continue. Only the indents are read, so
 * any run of rows that starts at a root (the page shows whole trees) is drawn consistently.
 */
export function treeBranches(indents: readonly number[]): string[] {
  const n = indents.length;
  /** lastAt[i]: no later sibling of row i (a later row at the same indent before one shallower). */
  const isLast: boolean[] = new Array(n).fill(true);
  const open = new Map<number, number>();
  for (let i = n - 1; i >= 0; i--) {
    const d = indents[i]!;
    for (const k of [...open.keys()]) if (k > d) open.delete(k);
    isLast[i] = !open.has(d);
    open.set(d, i);
  }
  const out: string[] = [];
  const stillOpen: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const d = indents[i]!;
    let prefix = "";
    for (let k = 1; k < d; k++) prefix += stillOpen[k] ? "│  " : "   ";
    if (d > 0) prefix += isLast[i] ? "└─ " : "├─ ";
    stillOpen[d] = !isLast[i];
    stillOpen.length = d + 1;
    out.push(prefix);
  }
  return out;
}
