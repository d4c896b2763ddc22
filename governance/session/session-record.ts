import * as z from "../zod.ts";
import { BudgetState, EMPTY_BUDGET } from "./budget-state.ts";
import { AgentRole } from "../config/config-schema.ts";
import { isSessionId, SessionId } from "../storage/session-id.ts";

export { isSessionId, SessionId };

/** Seed 003's five states (S1–S5). */
export const SessionState = z.enum(["beginning", "compacted", "between_turn", "interrupted", "resumed"]);
export type SessionState = z.infer<typeof SessionState>;

/**
 * Control status, orthogonal to the lifecycle state: whether a user asked the session to stop and how far that got.
 * `completed` = a child's task returned; `orphaned` = closed by orphan detection.
 */
export const ControlStatus = z.enum(["active", "stopping", "stopped", "completed", "orphaned"]);
export type ControlStatus = z.infer<typeof ControlStatus>;

/** Seed 003 level from the exact depth: 1 primary, 2 first delegation, 3 anything deeper. The one level rule. */
export function levelOf(depth: number): number {
  return Math.min(depth + 1, 3);
}

/**
 * How a stop became final, the one name used by the stop ladder, the parent's notification (queue file) and its text:
 * `ladder` = L3 delivered after the directives, `hard-stop` = no tool call in time so the SDK aborted it (confirmed
 * idle), `compliance` = the session ended its turn itself while stopping.
 */
export const StopHow = z.enum(["ladder", "hard-stop", "compliance"]);
export type StopHow = z.infer<typeof StopHow>;
/**
 * What the parent is told really happened: a {@link StopHow}, or `user-abort` — an abort governance did not send (the
 * user pressed Escape, or another client aborted it) while the stop was pending.
 */
export const NoticeHow = z.enum([...StopHow.options, "user-abort"]);
export type NoticeHow = z.infer<typeof NoticeHow>;

export const StopLevel = z.union([z.literal(1), z.literal(2), z.literal(3)]);
export type StopLevel = z.infer<typeof StopLevel>;

export const ToolCall = z.object({
  tool: z.string(),
  callId: z.string(),
  at: z.number().int(),
  /** A short, sanitized summary of the arguments (never the whole payload). */
  summary: z.string().max(200).default(""),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const ChildLink = z.object({
  sessionId: SessionId,
  agent: z.string().nullable(),
  createdAt: z.number().int(),
  closedAt: z.number().int().nullable().default(null),
  outcome: z.enum(["running", "completed", "aborted", "failed", "orphaned"]).default("running"),
});
export type ChildLink = z.infer<typeof ChildLink>;

export const StopProgress = z.object({
  requestId: z.string(),
  requestedAt: z.number().int(),
  reason: z.string().max(500),
  requestedBy: z.string().max(100),
  /** Next level to deliver on a tool result; after 3 the session is terminated. */
  nextLevel: StopLevel,
  /** Levels delivered so far, in order. */
  delivered: z.array(StopLevel).default([]),
  /** When the hard stop (SDK abort) fires; moved by signs of life once a directive was delivered (`stop-deadline.ts`). */
  deadlineAt: z.number().int(),
  /** The quiet time a sign of life buys (config `stop.deadline` at the request); null on records older than it. */
  quietMs: z.number().int().nonnegative().nullable().default(null),
  /** The absolute cap on the deadline (request + config `stop.maxWait`); null = the deadline never moves. */
  capAt: z.number().int().nullable().default(null),
  abortAttempts: z.number().int().default(0),
  /** The parent was told this stop happened: it is told once per stop, whichever path (L3, abort, compliance). */
  parentNotified: z.boolean().default(false),
});
export type StopProgress = z.infer<typeof StopProgress>;

/**
 * How a session's work ended, when it did (governance/session/session-end.ts): its task completed or failed,
 * OpenCode deleted it, or no process hosts it any more (orphaned, e.g. after a crash). `null` while it runs.
 * Optional on disk: an older build reads past it (zod drops unknown keys) and never quarantines the record.
 */
export const SessionEnd = z.object({
  at: z.number().int(),
  how: z.enum(["completed", "failed", "deleted", "orphaned"]),
  /** What the host said (an error's name), short. */
  detail: z.string().max(200).nullable().default(null),
});
export type SessionEnd = z.infer<typeof SessionEnd>;

/**
 * The OpenCode process that runs the session (the last to take it: created, first seen, resumed). With it, any
 * process — or the CLI — can tell a session whose process died (a crash) from one that runs, at once on the same host
 * (storage/lock-owner.ts). Optional: records of older builds have none and fall back to the 10-minute orphan rule.
 */
export const SessionHost = z.object({ host: z.string().max(255), pid: z.number().int().positive(), start: z.string().max(40).nullable() });
export type SessionHost = z.infer<typeof SessionHost>;

export const Counters = z.object({
  toolCalls: z.number().int().default(0),
  modelSteps: z.number().int().default(0),
  violations: z.number().int().default(0),
  compactions: z.number().int().default(0),
  resumes: z.number().int().default(0),
});
export type Counters = z.infer<typeof Counters>;

/** The config phase a session works under (S1-R03), since when this session has seen it. */
export const PhaseMark = z.object({ phase: z.string().max(60), at: z.number().int() });
export type PhaseMark = z.infer<typeof PhaseMark>;
/** Phase changes kept in a record, newest last. */
export const MAX_PHASE_HISTORY = 20;

/** Seed 003 S1 "stale state warnings": which one (session/stale-state.ts). */
export const StaleKind = z.enum(["todo", "phase", "activity"]);
export type StaleKind = z.infer<typeof StaleKind>;

/** Seed 003 S1 "First Action Required", checked on the session's first tool call (session/first-action.ts). */
export const FirstAction = z.object({
  at: z.number().int(),
  tool: z.string().max(100),
  role: AgentRole,
  ok: z.boolean(),
});
export type FirstAction = z.infer<typeof FirstAction>;

/** What a session had done when it was interrupted (S4 "archive stats to history"). */
export const InterruptionSnapshot = z.object({
  at: z.number().int(),
  /** The state it was cut off in. */
  state: SessionState,
  counters: Counters,
  lastToolCall: ToolCall.nullable(),
  todo: z.object({ total: z.number().int(), open: z.number().int() }).nullable(),
});
export type InterruptionSnapshot = z.infer<typeof InterruptionSnapshot>;
/** Interruptions kept in a record, newest last. */
export const MAX_INTERRUPTIONS = 10;

/**
 * What a subagent hands back when a stop or a budget ends it (issue 44 item 3): its last answer text (the host's
 * finished text part, clipped) and the files its file tools changed (project-relative, newest last). Read when its
 * parent's note is rendered (stop/notifications.ts); absent on roots and on older records.
 */
export const Handback = z.object({
  answer: z.string().max(2_000).nullable().default(null),
  files: z.array(z.string().max(300)).max(20).default([]),
});
export type Handback = z.infer<typeof Handback>;

export const SessionRecord = z.object({
  schemaVersion: z.literal(2),
  sessionId: SessionId,
  parentId: SessionId.nullable(),
  rootId: SessionId,
  /** Seed 003 level: 1 primary, 2 first delegation, 3 deeper (capped display; depth is exact). */
  level: z.number().int().min(1),
  /** Length of the parentID chain: 0 for a root session. */
  depth: z.number().int().min(0),
  agent: z.string().nullable(),
  /** OpenCode's title of the session, stored clean (session-title.ts); absent until OpenCode names it, and on older records. */
  title: z.string().max(200).nullable().optional(),
  state: SessionState,
  control: ControlStatus,
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  /** Last hook activity (tool call, model step, message). Drives the 1 h / 48 h resume window. */
  lastActivityAt: z.number().int(),
  idleAt: z.number().int().nullable().default(null),
  interruptedAt: z.number().int().nullable().default(null),
  /** State before `interrupted`, kept so a resume can say where the session stood. */
  stateBeforeInterrupt: SessionState.nullable().default(null),
  lastToolCall: ToolCall.nullable().default(null),
  firstTool: z.string().nullable().default(null),
  counters: Counters.default({ toolCalls: 0, modelSteps: 0, violations: 0, compactions: 0, resumes: 0 }),
  compactionHistory: z.array(z.object({ at: z.number().int(), trigger: z.string() })).default([]),
  /** Last governance-relevant actions, newest last, at most 3 (S2-R03). */
  recentActions: z.array(z.string().max(200)).max(3).default([]),
  children: z.array(ChildLink).default([]),
  /** `atToolCalls`: the tool-call count when the list last changed (the todo staleness counts from it). */
  todo: z
    .object({ total: z.number().int(), open: z.number().int(), atToolCalls: z.number().int().default(0) })
    .nullable()
    .default(null),
  /** v2 (S1-R03): the config phase this session works under, and each change of it (session/phase-history.ts). */
  phase: PhaseMark.nullable().default(null),
  phaseHistory: z.array(PhaseMark).max(MAX_PHASE_HISTORY).default([]),
  /** v2: stale-state warnings raised and audited, until they clear (session/stale-state.ts). */
  stale: z.array(StaleKind).default([]),
  /** v2: the first tool call checked against the role's required first action; null before it, or on older records. */
  firstAction: FirstAction.nullable().default(null),
  /** v2 (S4): a snapshot of the counters at each interruption, newest last. */
  interruptions: z.array(InterruptionSnapshot).max(MAX_INTERRUPTIONS).default([]),
  stop: StopProgress.nullable().default(null),
  stoppedAt: z.number().int().nullable().default(null),
  /** Set when this process synthesized a resume; the resume context is shown until the next turn ends. */
  resume: z
    .object({
      at: z.number().int(),
      idleMs: z.number().int(),
      previousActivityAt: z.number().int(),
      previousState: SessionState,
      interrupted: z.boolean(),
    })
    .nullable()
    .default(null),
  /** Post-compaction reminder pending for the next model steps (S2-R01). */
  compactedPending: z.boolean().default(false),
  /** Use against the budgets and their escalation (docs/budgets.md). Added in v1 with a default: older records read as unused. */
  budget: BudgetState.default(EMPTY_BUDGET),
  end: SessionEnd.nullable().optional(),
  handback: Handback.optional(),
  hostedBy: SessionHost.nullable().optional(),
  /** This user's governance created it for a session OpenCode showed (storage/record-attestation.ts); absent on planted records. */
  attest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable()
    .optional(),
});
export type SessionRecord = z.infer<typeof SessionRecord>;

export const CURRENT_SCHEMA_VERSION = 2 as const;

export type Hierarchy = Pick<SessionRecord, "parentId" | "rootId" | "depth" | "level">;

/** Depth from the parent chain; without the parent's record a child is assumed one below a root. */
export function hierarchy(sessionId: string, parentId: string | null, parent: { depth: number; rootId: string } | undefined): Hierarchy {
  if (parentId === null) return { parentId: null, rootId: sessionId, depth: 0, level: 1 };
  const depth = parent ? parent.depth + 1 : 1;
  return { parentId, rootId: parent?.rootId ?? parentId, depth, level: levelOf(depth) };
}

/** An S1 record (S1-R01..R08): state `beginning`, control `active`, counters zeroed. Undefined if ids are invalid. */
export function freshRecord(sessionId: string, at: number, agent: string | null, h: Hierarchy): SessionRecord | undefined {
  const parsed = SessionRecord.safeParse({
    schemaVersion: CURRENT_SCHEMA_VERSION,
    sessionId,
    ...h,
    agent,
    state: "beginning",
    control: "active",
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
  });
  return parsed.success ? parsed.data : undefined;
}
