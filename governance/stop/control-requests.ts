import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import type { AuditLog } from "../storage/audit-log.ts";
import type { Clock } from "../time/clock.ts";
import { ownerIsGone } from "../storage/lock-owner.ts";
import { enqueue, type StopDirective } from "./directive-queue.ts";
import type { QueuedStop } from "./stop-ack.ts";
import type { GovernancePaths } from "../storage/governance-paths.ts";
import { validateInjectText } from "../texts/inject-sanitizer.ts";
import { agentToken, plainLine, sessionToken, untrustedLine } from "../text-safety/text-parts.ts";
import { cleanLine } from "../text-safety/untrusted-text.ts";
import { isSessionId, type SessionRecord, type StopLevel } from "../session/session-record.ts";
import type { SessionStore } from "../session/session-store.ts";
import { isRunningChild, isRunningSession, sessionStatus, statusPhrase } from "../session/running.ts";
import { formatIdle } from "../time/time-format.ts";
import { CORE_LINE, type HostLine, hostToolName } from "../host/host-lines.ts";
import { MAX_TREE_INDENT, sessionTree } from "../session/session-tree.ts";
import { type RecordTrust, recordTrust, splitByTrust } from "../storage/record-attestation.ts";

/**
 * The requests a human (CLI, dashboard) or a primary agent's tool makes of running sessions. Every way in writes the
 * same per-session directive files; the plugin process hosting the session picks them up. Expected failures
 * (unknown target, finished session, empty guidance) are values with a message for the user.
 */
export type ControlContext = {
  paths: GovernancePaths;
  store: SessionStore;
  audit: AuditLog;
  clock: Clock;
  by: string;
  /** Which records this user's governance wrote (storage/record-attestation.ts); the user's key when not given. */
  trust?: RecordTrust;
};

/** A running session a title fragment could mean, listed when the fragment names more than one. */
export type Candidate = { sessionId: string; title: string | null; agent: string | null };

/**
 * `left`: running sessions of the agent beyond {@link MAX_TARGETS}, not targeted. `candidates`: the running sessions
 * an ambiguous title fragment names (at most {@link MAX_CANDIDATES}).
 */
export type TargetResult =
  | { ok: true; sessions: SessionRecord[]; left: number; unconfirmed?: Unconfirmed }
  | { ok: false; reason: string; candidates?: Candidate[] };

/**
 * A session id whose record cannot say whether it runs (undecodable, missing, or naming a host that is gone): the
 * request is queued all the same, and only the live OpenCode process that hosts the id takes it — its
 * acknowledgement is the confirmation (issue 41 §3: a record rewritten by an agent's process took its session out of
 * the user's reach). `why` is said to the user; `hostPid` is the last host the record named, if any.
 */
export type Unconfirmed = { sessionId: string; why: string; hostPid: number | null };

/** At most this many candidates are listed for an ambiguous title fragment. */
export const MAX_CANDIDATES = 10;

/** At most this many sessions are stopped or guided by one agent-name request; the rest are named as left out. */
export const MAX_TARGETS = 50;

/** Why a known session cannot be stopped or given guidance, in words the user can act on. */
function notRunning(r: SessionRecord, now: number): string {
  const id = r.sessionId;
  switch (sessionStatus(r)) {
    case "idle": {
      const ago = formatIdle(now - (r.idleAt ?? now));
      return r.parentId === null
        ? `session ${id} is not running: it is idle, waiting for its user's next prompt (its turn ended ${ago} ago)`
        : `session ${id} is not running: its turn ended ${ago} ago and its task returned to its parent`;
    }
    case "deleted":
      return `session ${id} is not running: it was deleted`;
    case "interrupted":
      return `session ${id} is not running: it was interrupted (Escape) and waits to be resumed`;
    default:
      return `session ${id} is not running (${sessionStatus(r)}; state ${r.state}, ${r.control})`;
  }
}

/**
 * A target is a session id; an agent name, meaning every running session of that agent; or else a fragment of a
 * running session's title (OpenCode's, case-insensitive), which must name exactly one: several are refused with the
 * candidates listed, so a stop never lands on a session the user did not mean. A known but finished session is
 * refused with its status, so "stop" on something already done says so instead of pretending.
 */
export async function resolveTarget(ctx: ControlContext, target: string): Promise<TargetResult> {
  if (isSessionId(target)) {
    const record = await ctx.store.read(target);
    if (!record) {
      const why = await traceOf(ctx, target);
      if (!why) return { ok: false, reason: `unknown session ${target}: no governance record in ${ctx.paths.sessions}` };
      return { ok: true, sessions: [], left: 0, unconfirmed: { sessionId: target, why, hostPid: null } };
    }
    if (!isRunningSession(record)) return { ok: false, reason: notRunning(record, ctx.clock.now()) };
    if (!trustOf(ctx).verified(record))
      return {
        ok: false,
        reason: `session ${target} is not one this user's governance recorded (a planted or copied-in record, or one from an older build never active since): not targeted`,
      };
    if (record.hostedBy && (await ownerIsGone(record.hostedBy))) {
      const why = `its OpenCode process ${record.hostedBy.pid} is gone, says its record`;
      return { ok: true, sessions: [], left: 0, unconfirmed: { sessionId: target, why, hostPid: null } };
    }
    return { ok: true, sessions: [record], left: 0 };
  }
  const wanted = cleanLine(String(target ?? ""), 80);
  if (wanted === "") return { ok: false, reason: "no target: give a session id (ses_…), an agent name or part of a session's title" };
  const trust = trustOf(ctx);
  // Only records this user's governance wrote: a planted "running" record is never stopped or guided by name or title.
  const running = (await ctx.store.list()).filter((r) => isRunningSession(r) && trust.verified(r)).sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  const ofAgent = running.filter((r) => r.agent === target);
  if (ofAgent.length > 0) return { ok: true, sessions: ofAgent.slice(0, MAX_TARGETS), left: Math.max(0, ofAgent.length - MAX_TARGETS) };
  const needle = wanted.toLowerCase();
  const titled = running.filter((r) => r.title?.toLowerCase().includes(needle));
  if (titled.length === 1) return { ok: true, sessions: titled, left: 0 };
  const quoted = untrustedLine(wanted, 80);
  if (titled.length === 0) return { ok: false, reason: `no running session of agent ${quoted} or with ${quoted} in its title` };
  const candidates = titled.slice(0, MAX_CANDIDATES).map((r) => ({ sessionId: r.sessionId, title: r.title ?? null, agent: r.agent }));
  const lines = candidates.map((c) => `  ${sessionToken(c.sessionId)}  ${c.title ? untrustedLine(c.title, 80) : "(no title)"}  ${agentToken(c.agent)}`);
  const more = titled.length > candidates.length ? [`  … and ${titled.length - candidates.length} more`] : [];
  return {
    ok: false,
    reason: [`${quoted} is in the titles of ${titled.length} running sessions; name one by its id or a longer part of its title:`, ...lines, ...more].join(
      "\n",
    ),
    candidates,
  };
}

/**
 * Why a session id without a readable record may still be one a process runs: its record file is there but not
 * readable by this build, a copy of it was set aside, or governance has audited it. `undefined`: never seen here.
 */
async function traceOf(ctx: ControlContext, id: string): Promise<string | undefined> {
  if (existsSync(`${ctx.paths.sessions}/${id}.json`)) return "its record cannot be read by this build";
  let quarantined = false;
  try {
    quarantined = readdirSync(ctx.paths.quarantine).some((f) => f.startsWith(`${id}.json.`));
  } catch {
    // No quarantine folder.
  }
  if (quarantined) return "its record was set aside as undecodable";
  const events = await ctx.audit.read().catch(() => []);
  return events.some((e) => e.sessionId === id) ? "it has no record now, but governance has seen it" : undefined;
}

/** The context's record trust, the user's own key when none was given (set once). */
export function trustOf(ctx: ControlContext): RecordTrust {
  ctx.trust ??= recordTrust();
  return ctx.trust;
}

/** What a capped agent-name request says about the sessions it left out. */
function leftOut(resolved: { left: number }, target: string): string[] {
  return resolved.left > 0
    ? [`${resolved.left} more running sessions of agent "${target}" not targeted (at most ${MAX_TARGETS} at once; the most recently active were)`]
    : [];
}

function newId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
}

/** `queued`: each stop request written, for {@link awaitStopAcks} (stop-ack.ts). */
export type RequestResult =
  | { ok: true; sessionIds: string[]; warnings: string[]; queued?: QueuedStop[] }
  | { ok: false; reason: string; candidates?: Candidate[] };

/** The sessions a request goes to: the resolved records, or the one id only a live process can confirm. */
function targetsOf(resolved: TargetResult & { ok: true }): { sessionId: string; agent: string | null; hostPid: number | null }[] {
  if (resolved.unconfirmed) return [{ sessionId: resolved.unconfirmed.sessionId, agent: null, hostPid: resolved.unconfirmed.hostPid }];
  return resolved.sessions.map((s) => ({ sessionId: s.sessionId, agent: s.agent, hostPid: s.hostedBy?.pid ?? null }));
}

function unconfirmedWarning(resolved: TargetResult & { ok: true }): string[] {
  const u = resolved.unconfirmed;
  return u ? [`session ${u.sessionId}: ${u.why}; sent all the same — only an OpenCode process that runs it can take it`] : [];
}

export async function requestStop(ctx: ControlContext, target: string, opts: { level?: StopLevel; reason?: string } = {}): Promise<RequestResult> {
  const resolved = await resolveTarget(ctx, target);
  if (!resolved.ok) return resolved;
  const level = opts.level ?? 1;
  // Stored clean (no terminal controls, no invisible characters, no secrets): it is printed and shown to models.
  const reason = cleanLine(opts.reason ?? "", 500);
  const queued: QueuedStop[] = [];
  for (const s of targetsOf(resolved)) {
    const directive: StopDirective = { kind: "stop", id: newId("stop"), at: ctx.clock.now(), level, reason, by: ctx.by.slice(0, 100) };
    const res = await enqueue(ctx.paths, s.sessionId, directive);
    if (!res.ok) return { ok: false, reason: res.reason };
    queued.push({ sessionId: s.sessionId, directive, file: res.file, hostPid: s.hostPid });
    await ctx.audit.append("stop_queued", { sessionId: s.sessionId, requestId: directive.id, level, reason, by: ctx.by, agent: s.agent });
  }
  const warnings = [...unconfirmedWarning(resolved), ...leftOut(resolved, target)];
  return { ok: true, sessionIds: queued.map((q) => q.sessionId), warnings, queued };
}

export async function requestInject(ctx: ControlContext, target: string, text: string, opts: { maxLength?: number } = {}): Promise<RequestResult> {
  const checked = validateInjectText(text, { maxLength: opts.maxLength ?? 500 });
  if (!checked.valid) return { ok: false, reason: `guidance refused: ${checked.warnings.join("; ") || "nothing left after sanitizing"}` };
  const resolved = await resolveTarget(ctx, target);
  if (!resolved.ok) return resolved;
  // Stop wins over inject: guidance for a session being stopped would be dropped at delivery, so it is refused now.
  const stopping = resolved.sessions.filter((s) => s.control === "stopping");
  const targets: { sessionId: string }[] = resolved.unconfirmed ? targetsOf(resolved) : resolved.sessions.filter((s) => s.control !== "stopping");
  const refusedFor = (s: SessionRecord) =>
    `session ${s.sessionId} is being stopped${s.stop?.reason ? ` ("${plainLine(s.stop.reason, 60)}")` : ""}: a stopping session gets no guidance, only its stop directives`;
  if (targets.length === 0) return { ok: false, reason: `guidance refused: ${stopping.map(refusedFor).join("; ")}` };
  const warnings = [...checked.warnings, ...unconfirmedWarning(resolved), ...stopping.map((s) => `not sent to ${refusedFor(s)}`), ...leftOut(resolved, target)];
  for (const s of targets) {
    const id = newId("inject");
    const res = await enqueue(ctx.paths, s.sessionId, { kind: "inject", id, at: ctx.clock.now(), text: checked.sanitized, by: ctx.by.slice(0, 100) });
    if (!res.ok) return { ok: false, reason: res.reason };
    await ctx.audit.append("inject_queued", {
      sessionId: s.sessionId,
      injectId: id,
      preview: checked.sanitized.slice(0, 60),
      warnings: checked.warnings,
      by: ctx.by,
    });
  }
  return { ok: true, sessionIds: targets.map((s) => s.sessionId), warnings };
}

/** At most this many lines in a tree listing; the rest are counted (a flood of records cannot push out the user's). */
export const MAX_TREE_LINES = 200;

/**
 * One line per session, children indented under their parents, for the CLI and the `governance` tool's `sessions`.
 * The walk ({@link sessionTree}) survives parent cycles and absurd stored depths; finished sessions are skipped
 * unless `all`, and their children move up one indent. `note` adds a caller's text to a line (the CLI: budgets);
 * `processGone` names records whose OpenCode process the caller found dead (listed `orphaned`, not running).
 * Records this user's governance did not write (`trust`, storage/record-attestation.ts) are not listed, only
 * counted; a listing cut at {@link MAX_TREE_LINES} says how many it left out.
 */
export function renderTree(
  records: readonly SessionRecord[],
  opts: {
    now: number;
    all?: boolean;
    note?: (r: SessionRecord) => string;
    trust?: RecordTrust;
    processGone?: (r: SessionRecord) => boolean;
    /** The host line the last tool is named in (records keep the core's `bash`; OpenCode 2 offers `shell`). */
    hostLine?: HostLine;
  },
): string[] {
  const gone = opts.processGone ?? (() => false);
  const { trusted, unverified } = opts.trust ? splitByTrust(records, opts.trust) : { trusted: records, unverified: [] };
  const lines: string[] = [];
  const childIndent = new Map<string, number>();
  let left = 0;
  for (const { record: r, cycle } of sessionTree(trusted)) {
    const indent = Math.min(cycle ? 0 : (r.parentId && childIndent.get(r.parentId)) || 0, MAX_TREE_INDENT);
    const keep = opts.all || (isRunningSession(r) && !gone(r)) || r.children.some(isRunningChild);
    childIndent.set(r.sessionId, keep ? indent + 1 : indent);
    if (!keep) continue;
    if (lines.length >= MAX_TREE_LINES) {
      left++;
      continue;
    }
    // Records are files anyone in the project can write: every field is cleaned (no terminal escapes, no secrets,
    // directive-like text flagged) before it reaches a terminal or, through the `governance` tool, a model.
    const last = r.lastToolCall ? plainLine(`${hostToolName(opts.hostLine ?? CORE_LINE, r.lastToolCall.tool)} ${r.lastToolCall.summary}`, 60) : "-";
    const ago = Math.max(0, Math.round((opts.now - r.lastActivityAt) / 1000));
    const note = opts.note?.(r) ?? "";
    lines.push(
      `${"  ".repeat(indent)}${sessionToken(r.sessionId)}${r.title ? `  ${untrustedLine(r.title, 60)}` : ""}  ${r.agent ? agentToken(r.agent) : "?"}  depth ${r.depth}  ${statusPhrase(r, gone(r))}  last: ${last}  (${ago}s ago)${cycle ? "  [parent cycle]" : ""}${note ? `  ${note}` : ""}`,
    );
  }
  if (left > 0) lines.push(`… ${left} more sessions not shown (at most ${MAX_TREE_LINES} lines; \`sessions --json\` lists every one)`);
  if (unverified.length > 0)
    lines.push(
      `(${unverified.length} record${unverified.length === 1 ? "" : "s"} in the state folder not written by this user's governance — planted, copied in, or from an older build never active since — not listed)`,
    );
  return lines;
}
