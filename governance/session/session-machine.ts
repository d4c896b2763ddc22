import * as z from "../zod.ts";
import { AgentRole } from "../config/config-schema.ts";
import { audit, type Effect } from "./effects.ts";
import { applyChecks, checkEffects } from "./session-checks.ts";
import { noteInterruption, notePhase, PhaseName as Phase } from "./session-history.ts";
import { cutOffByCrash } from "./crash-recovery.ts";
import { classifyResume, idleMs } from "./resume-window.ts";
import { recordToolCall } from "./tool-call-record.ts";
import { abortedBy } from "./stop-origin.ts";
import { freshRecord, hierarchy, isSessionId, SessionId, type SessionRecord, type SessionState } from "./session-record.ts";
import { cleanTitle } from "./session-title.ts";
import { compactionSeen } from "./compaction-seen.ts";
import { checkedStepEvent } from "./step-events.ts";

export type { Effect } from "./effects.ts";

/**
 * The five-state session machine (seed 003, S1–S5) as data plus one pure function.
 * Semantics, with the reasons behind them, are in docs/session-states.md; this file is the executable form.
 *
 * Invariants:
 * - Turn-scoped context (`compactedPending`, `resume`) is cleared only by an `idle` ending a turn in which a model
 *   step ran; `compacted`/`resumed` mean "no step yet", so the state itself answers "did a step run since?".
 * - `idle` is never an interruption; only `aborted` makes `interrupted`, once (repeats return the same record).
 * - Resume window (at `first_seen` and every `prompt`): exactly minIdle is a resume, exactly maxIdle is expired.
 * - Control status is never changed; S5-R08 is `resumeContextDue` (level 1 only).
 */

const At = z.number().int();
const Attest = z.string().regex(/^[0-9a-f]{64}$/);
/** Hierarchy of the parent, read by the adapter from the parent's record (depth and root come from the chain). */
export const ParentInfo = z.object({ depth: z.number().int().min(0), rootId: SessionId });
export type ParentInfo = z.infer<typeof ParentInfo>;
const Files = z.array(z.string()).max(50).optional();

export const SessionEvent = z.discriminatedUnion("type", [
  /** `session.created` (S1). Does not fire for `opencode -s <id>`. */
  z.object({
    type: z.literal("created"),
    at: At,
    parentId: SessionId.nullable(),
    agent: z.string().nullable(),
    /** OpenCode's title at creation (a subagent's names its task); later renames are `retitle` steps (session-title.ts). */
    title: z.string().nullable().optional(),
    parentRecord: ParentInfo.optional(),
    /** The record's attestation (storage/record-attestation.ts): the host showed this session to this user's plugin. */
    attest: Attest.optional(),
    phase: Phase,
  }),
  /** First activity of a session this process has not seen; `parentId`/`parentRecord` when the adapter learned the
   * parent (e.g. `session.get`): without them a session with no record is taken as a root. */
  z.object({
    type: z.literal("first_seen"),
    at: At,
    agent: z.string().nullable().optional(),
    parentId: SessionId.nullable().optional(),
    parentRecord: ParentInfo.optional(),
    attest: Attest.optional(),
    phase: Phase,
  }),
  z.object({ type: z.literal("prompt"), at: At }), // a new user message (typed, or a parent's `task`): the resume window
  /** One LLM request of the session. Feed it before building that step's injection. */
  z.object({ type: z.literal("model_step"), at: At, phase: Phase }),
  /** `role`: the caller's role, for the first-action check of its first call (session/first-action.ts). */
  // `files`: the paths the call writes (a file tool's targets, project-relative): what a stopped subagent hands back.
  z.object({ type: z.literal("tool_before"), at: At, tool: z.string(), callId: z.string(), summary: z.string(), role: AgentRole.optional(), files: Files }),
  /** `session.idle`: after EVERY turn, not a user stop; it only ends the turn. */
  z.object({ type: z.literal("idle"), at: At }),
  /**
   * `session.error` with MessageAbortedError (Escape, SDK abort), or an ancestor's cascade (`cascade: true`): the
   * ancestor's cascade already covers this session's subtree, so a cascaded abort does not cascade again.
   * `cause: "host"`: the host itself stopped a stalled turn (OpenCode 2's `interrupted` reason `inactivity`): the
   * session is interrupted, but it is not the user's Escape, so nothing cascades and it is audited as the host's.
   */
  z.object({ type: z.literal("aborted"), at: At, cascade: z.boolean().optional(), cause: z.literal("host").optional() }),
  /** Any other `session.error`: logged, no state change. */
  z.object({ type: z.literal("errored"), at: At, message: z.string() }),
  /**
   * A compaction finished. `auto`: OpenCode's own (its autocontinue hook); `summarize`: the `session.compacted` event
   * (a user's /compact, or the event that follows an automatic one). One compaction is counted once: see
   * {@link compactionSeen}.
   */
  z.object({ type: z.literal("compacted"), at: At, trigger: z.enum(["summarize", "auto"]) }),
  z.object({ type: z.literal("todo_updated"), at: At, total: z.number().int(), open: z.number().int() }),
  /** The session's agent, learned from its user messages (OpenCode 1.18 does not put it on the session). */
  z.object({ type: z.literal("agent_learned"), at: At, agent: z.string().min(1) }),
  /** A governance-relevant action (e.g. "delegated to x"); the last three survive compaction (S2-R03). */
  z.object({ type: z.literal("action_remembered"), at: At, action: z.string() }),
]);
export type SessionEvent = z.infer<typeof SessionEvent>;
export type SessionEventType = SessionEvent["type"];

export type StateKey = SessionState | "absent";
type Target =
  | { kind: "create" } // no record: build an S1 record
  | { kind: "go"; to: SessionState }
  | { kind: "stay" }
  | { kind: "window" } // classify the gap (resume / continue / expired), then apply the event
  | { kind: "link" } // a late `created` may supply the parent of a record first built without one
  | { kind: "illegal"; reason: string };

const create = { kind: "create" } as const;
const stay = { kind: "stay" } as const;
const windowed = { kind: "window" } as const;
const link = { kind: "link" } as const;
const go = <S extends SessionState>(to: S) => ({ kind: "go", to }) as const;
const noRecord = { kind: "illegal", reason: "no_record: feed first_seen before any other event" } as const;

/**
 * Which events are legal in which state, and where they lead. `stay` keeps the state (fields still change).
 * `compacted`/`resumed` mean "the pending context has not reached a model step yet": the first step moves them to
 * `between_turn`, while `compactedPending`/`resume` keep the text on every step until the turn ends (idle).
 */
export const TRANSITIONS = {
  absent: {
    created: create,
    first_seen: create,
    prompt: noRecord,
    model_step: noRecord,
    tool_before: noRecord,
    idle: noRecord,
    aborted: noRecord,
    errored: noRecord,
    compacted: noRecord,
    todo_updated: noRecord,
    agent_learned: noRecord,
    action_remembered: noRecord,
  },
  beginning: {
    created: link,
    first_seen: windowed,
    prompt: windowed,
    model_step: stay,
    tool_before: stay,
    idle: go("between_turn"),
    aborted: go("interrupted"),
    errored: stay,
    compacted: go("compacted"),
    todo_updated: stay,
    agent_learned: stay,
    action_remembered: stay,
  },
  between_turn: {
    created: link,
    first_seen: windowed,
    prompt: windowed,
    model_step: stay,
    tool_before: stay,
    idle: stay,
    aborted: go("interrupted"),
    errored: stay,
    compacted: go("compacted"),
    todo_updated: stay,
    agent_learned: stay,
    action_remembered: stay,
  },
  compacted: {
    created: link,
    first_seen: windowed,
    prompt: windowed,
    model_step: go("between_turn"),
    tool_before: go("between_turn"),
    idle: stay,
    aborted: go("interrupted"),
    errored: stay,
    compacted: go("compacted"),
    todo_updated: stay,
    agent_learned: stay,
    action_remembered: stay,
  },
  resumed: {
    created: link,
    first_seen: windowed,
    prompt: windowed,
    model_step: go("between_turn"),
    tool_before: go("between_turn"),
    idle: stay,
    aborted: go("interrupted"),
    errored: stay,
    compacted: go("compacted"),
    todo_updated: stay,
    agent_learned: stay,
    action_remembered: stay,
  },
  interrupted: {
    // A model step after an interruption is the session going on (a new prompt, or `task` with task_id): a resume.
    // A tool call is a straggler of the aborted step: bookkeeping only. Repeated aborts are idempotent.
    created: link,
    first_seen: windowed,
    prompt: windowed,
    model_step: windowed,
    tool_before: stay,
    idle: stay,
    aborted: stay,
    errored: stay,
    compacted: go("compacted"),
    todo_updated: stay,
    agent_learned: stay,
    action_remembered: stay,
  },
} as const satisfies Record<StateKey, Record<SessionEventType, Target>>;

export interface TransitionContext {
  config: { minIdleMs: number; maxIdleMs: number };
  sessionId: string;
}
export interface TransitionResult {
  next: SessionRecord | undefined;
  effects: Effect[];
  /** Set when the event is not legal here: `next` is the input unchanged; the caller logs the reason. */
  illegal?: { reason: string };
}

/**
 * Pure transition: no clock (time is the event's `at`), no I/O, never throws. Effects are for the adapter.
 * Control status is never changed here; on an expired resume a `stopped` session stays stopped.
 */
export function transition(record: SessionRecord | undefined, event: SessionEvent, ctx: TransitionContext): TransitionResult {
  // The events of every step are checked by hand (step-events.ts); the rest, and anything doubtful, by the schema.
  let ev: SessionEvent | undefined = checkedStepEvent(event);
  if (!ev) {
    const parsed = SessionEvent.safeParse(event);
    if (!parsed.success) return illegal(record, `invalid_event: ${parsed.error.issues[0]?.message ?? "unknown"}`);
    ev = parsed.data;
  }
  if (!isSessionId(ctx.sessionId)) return illegal(record, "invalid_session_id");
  if (record && record.sessionId !== ctx.sessionId) return illegal(record, "session_mismatch");

  const target: Target = TRANSITIONS[record ? record.state : "absent"][ev.type];
  if (target.kind === "illegal") return illegal(record, target.reason);
  if (target.kind === "create") return createRecord(ev, ctx.sessionId);
  if (!record) return illegal(record, "no_record");
  if (target.kind === "link") return linkParent(record, ev);
  if (target.kind === "window") return applyWindow(record, ev, ctx);

  const from = record.state;
  const to = target.kind === "go" ? target.to : from;
  if (ev.type === "aborted" && from === "interrupted") return { next: record, effects: [] };
  if (ev.type === "compacted") {
    const seen = compactionSeen(record, ev);
    if (seen) return { next: seen, effects: [] };
  }
  const next = applyChecks(record, { ...apply(record, to, ev), updatedAt: Math.max(record.updatedAt, ev.at) }, ev);
  return { next, effects: [...effectsFor(record, next, ev), ...checkEffects(record, next, ev.at)] };
}

/**
 * S5-R08 in one place: a resume context is injected only into a primary session. The adapter checks this on
 * every step (the transform output is rebuilt each time), never the `resume_context` effect alone.
 */
export function resumeContextDue(record: SessionRecord): boolean {
  return record.resume !== null && record.level === 1;
}

function illegal(record: SessionRecord | undefined, reason: string): TransitionResult {
  return { next: record, effects: [], illegal: { reason } };
}

/** Field updates of an event that does not need the resume window; `to` comes from the table. */
function apply(record: SessionRecord, to: SessionState, ev: SessionEvent): SessionRecord {
  const r: SessionRecord = { ...record, state: to };
  const lastActivityAt = Math.max(r.lastActivityAt, ev.at);
  switch (ev.type) {
    case "model_step":
      return { ...r, lastActivityAt, counters: { ...r.counters, modelSteps: r.counters.modelSteps + 1 } };
    case "tool_before":
      return recordToolCall(r, ev, lastActivityAt);
    case "idle": {
      // Only an idle that ends a turn with a step in it retires turn-scoped context (state left compacted/resumed).
      const turnDone = to === "between_turn";
      return {
        ...r,
        idleAt: ev.at,
        lastActivityAt,
        ...(turnDone ? { resume: null, compactedPending: false } : {}),
      };
    }
    case "aborted":
      return { ...r, lastActivityAt, interruptedAt: ev.at, stateBeforeInterrupt: record.state, interruptions: noteInterruption(record, ev.at) };
    case "compacted":
      return {
        ...r,
        lastActivityAt,
        compactedPending: true,
        compactionHistory: [...r.compactionHistory, { at: ev.at, trigger: ev.trigger }],
        counters: { ...r.counters, compactions: r.counters.compactions + 1 },
      };
    case "todo_updated":
      return { ...r, todo: { total: ev.total, open: ev.open, atToolCalls: r.counters.toolCalls } };
    case "agent_learned":
      return { ...r, agent: ev.agent };
    case "action_remembered":
      return { ...r, recentActions: [...r.recentActions, ev.action.slice(0, 200)].slice(-3) };
    case "created":
    case "first_seen":
      // The host showed this session: a record without this user's attestation (an older build's) gets it.
      return ev.attest && r.attest !== ev.attest ? { ...r, attest: ev.attest } : r;
    case "errored":
    case "prompt":
      return r;
  }
}

function effectsFor(before: SessionRecord, after: SessionRecord, ev: SessionEvent): Effect[] {
  const from = before.state;
  const to = after.state;
  switch (ev.type) {
    case "aborted":
      if (ev.cascade) return [audit("session_aborted", { from, lastToolCall: after.lastToolCall, counters: after.counters, cascade: true, cause: "cascade" })];
      if (ev.cause === "host") return [audit("session_aborted", { from, lastToolCall: after.lastToolCall, counters: after.counters, cause: "host" })];
      return [
        { type: "interrupt_descendants" },
        audit("session_aborted", { from, lastToolCall: after.lastToolCall, counters: after.counters, cause: abortedBy(before) }),
      ];
    case "compacted":
      return [audit("session_compacted", { from, trigger: ev.trigger, count: after.counters.compactions })];
    case "errored":
      return [audit("session_error", { state: from, message: ev.message.slice(0, 500) })];
    default:
      return from === to ? [] : [audit("state_transition", { from, to, on: ev.type })];
  }
}

function createRecord(ev: SessionEvent, sessionId: string): TransitionResult {
  const init = ev.type === "created" || ev.type === "first_seen" ? ev : undefined;
  const parentId = init?.parentId ?? null;
  const parent = init?.parentRecord;
  const fresh = freshRecord(sessionId, ev.at, init?.agent ?? null, hierarchy(sessionId, parentId, parent));
  if (!fresh) return illegal(undefined, "invalid_record");
  const made = notePhase(fresh, init?.phase, ev.at);
  const title = ev.type === "created" ? cleanTitle(ev.title) : null;
  const next = { ...made, ...(init?.attest ? { attest: init.attest } : {}), ...(title ? { title } : {}) };
  const data = {
    via: ev.type,
    level: next.level,
    depth: next.depth,
    phase: next.phase?.phase ?? null,
    parentId,
    parentKnown: parentId === null || parent !== undefined,
  };
  return { next, effects: [audit("session_created", data)] };
}

function linkParent(record: SessionRecord, ev: SessionEvent): TransitionResult {
  if (ev.type !== "created") return illegal(record, "link_requires_created");
  if (ev.parentId === null || ev.parentId === record.parentId) return illegal(record, "duplicate_created");
  if (record.parentId !== null) return illegal(record, `parent_conflict: ${record.parentId} vs ${ev.parentId}`);
  const h = hierarchy(record.sessionId, ev.parentId, ev.parentRecord);
  const next = { ...record, ...h, agent: record.agent ?? ev.agent, updatedAt: Math.max(record.updatedAt, ev.at) };
  return { next, effects: [audit("child_linked", { via: "late_created", parentId: h.parentId, level: h.level, depth: h.depth })] };
}

/**
 * S5: the gap since `lastActivityAt` decides. `resume` → state `resumed` with `resume` filled; `expired` → a fresh
 * S1 record with the same id and hierarchy (the old one is replaced, its last activity kept in the `session_expired`
 * audit line; records idle beyond the window are archived by the periodic archive, not here); `continue` → the stored state is
 * kept (usually `between_turn`; a pending compaction or resume stays pending). A model step on an interrupted record
 * is then applied on top of the result, so its counters and state follow the same rules as any other step.
 */
function applyWindow(record: SessionRecord, ev: SessionEvent, ctx: TransitionContext): TransitionResult {
  const at = ev.at;
  const crashed = cutOffByCrash(record);
  const interrupted = record.state === "interrupted" || crashed;
  const kind = classifyResume({ lastActivityAt: record.lastActivityAt, now: at, interrupted, ...ctx.config });
  const agent = ev.type === "first_seen" && ev.agent ? ev.agent : record.agent;
  const attest = (ev.type === "first_seen" ? ev.attest : undefined) ?? record.attest;
  let next: SessionRecord;
  const effects: Effect[] = [];
  if (kind === "expired") {
    const { parentId, rootId, depth, level } = record;
    const fresh = freshRecord(record.sessionId, at, agent, { parentId, rootId, depth, level });
    if (!fresh) return illegal(record, "invalid_record");
    const kept = attest ? { ...fresh, attest } : fresh;
    next = record.control === "stopped" ? { ...kept, control: "stopped", stop: record.stop, stoppedAt: record.stoppedAt } : kept;
    effects.push(audit("session_expired", { idleMs: idleMs(record.lastActivityAt, at), previousState: record.state, lastActivityAt: record.lastActivityAt }));
  } else if (kind === "resume") {
    // A crash cut the turn off in the state the record still holds (an earlier Escape's state is not this one's).
    const previousState = interrupted && !crashed ? (record.stateBeforeInterrupt ?? "interrupted") : record.state;
    const resume = { at, idleMs: idleMs(record.lastActivityAt, at), previousActivityAt: record.lastActivityAt, previousState, interrupted };
    next = {
      ...record,
      agent,
      attest,
      state: "resumed",
      resume,
      lastActivityAt: Math.max(record.lastActivityAt, at),
      updatedAt: Math.max(record.updatedAt, at),
      counters: { ...record.counters, resumes: record.counters.resumes + 1 },
    };
    effects.push(audit("session_resumed", { ...resume, level: record.level, ...(crashed ? { cutOffByCrash: true } : {}) }), {
      type: "resume_context",
      allowed: record.level === 1,
    });
  } else {
    next = { ...record, agent, attest, lastActivityAt: Math.max(record.lastActivityAt, at), updatedAt: Math.max(record.updatedAt, at) };
  }
  if (ev.type === "first_seen" || ev.type === "prompt") return { next, effects }; // only the gap is classified
  const rest = transition(next, ev, ctx);
  return { next: rest.next, effects: [...effects, ...rest.effects], ...(rest.illegal ? { illegal: rest.illegal } : {}) };
}
