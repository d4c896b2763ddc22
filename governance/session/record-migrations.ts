import * as z from "../zod.ts";
import { readWronglyOrphaned } from "./crash-recovery.ts";
import { CURRENT_SCHEMA_VERSION, SessionRecord, SessionState } from "./session-record.ts";

export type MigrateResult = { ok: true; record: SessionRecord; fromVersion: number } | { ok: false; reason: string };

type Step = (raw: unknown) => { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * The pre-release (v0) metadata shape of seed 003: no `schemaVersion`, `sessionState`/`sessionLevel`/`parentSession`,
 * ISO timestamps. Kept only as the input of {@link v0ToV1}.
 */
export const SessionRecordV0 = z.object({
  sessionId: z.string(),
  sessionState: z.string().optional(),
  sessionLevel: z.number().int().min(1).optional(),
  parentSession: z.string().nullable().optional(),
  delegationDepth: z.number().int().min(0).optional(),
  agent: z.string().nullable().optional(),
  createdAt: z.string().optional(),
  lastUpdated: z.string(),
  idleAt: z.string().nullable().optional(),
  violationCount: z.number().int().optional(),
  phase: z.string().max(60).optional(),
  childSessions: z.array(z.object({ sessionId: z.string(), agent: z.string().nullable().optional(), createdAt: z.string().optional() })).optional(),
});
export type SessionRecordV0 = z.infer<typeof SessionRecordV0>;

function isoToMs(value: string | null | undefined, fallback: number): number;
function isoToMs(value: string | null | undefined, fallback: null): number | null;
function isoToMs(value: string | null | undefined, fallback: number | null): number | null {
  if (value == null) return fallback;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : fallback;
}

/**
 * v0 → v1. v0 never stored the root of a delegation tree, so `rootId` is the parent for a child (exact for depth 1,
 * a lower bound deeper down; the plugin re-derives it from OpenCode's parentID chain on the next event).
 */
export const v0ToV1: Step = (raw) => {
  const parsed = SessionRecordV0.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: `not a v0 record: ${z.prettifyError(parsed.error)}` };
  const v0 = parsed.data;
  const updatedAt = Date.parse(v0.lastUpdated);
  if (!Number.isFinite(updatedAt)) return { ok: false, reason: `v0 lastUpdated is not a date: ${v0.lastUpdated}` };
  const state = SessionState.safeParse(v0.sessionState);
  const level = v0.sessionLevel ?? 1;
  const parentId = v0.parentSession ?? null;
  const idleAt = isoToMs(v0.idleAt, null);
  return {
    ok: true,
    value: {
      schemaVersion: 1,
      sessionId: v0.sessionId,
      parentId,
      rootId: parentId ?? v0.sessionId,
      level,
      depth: v0.delegationDepth ?? level - 1,
      agent: v0.agent ?? null,
      state: state.success ? state.data : "between_turn",
      control: "active",
      createdAt: isoToMs(v0.createdAt, updatedAt),
      updatedAt,
      lastActivityAt: updatedAt,
      idleAt,
      interruptedAt: state.success && state.data === "interrupted" ? (idleAt ?? updatedAt) : null,
      counters: { toolCalls: 0, modelSteps: 0, violations: v0.violationCount ?? 0, compactions: 0, resumes: 0 },
      // Not a v1 field: carried to v1ToV2, which makes it the session's phase.
      ...(v0.phase ? { phase: v0.phase } : {}),
      children: (v0.childSessions ?? []).map((child) => ({
        sessionId: child.sessionId,
        agent: child.agent ?? null,
        createdAt: isoToMs(child.createdAt, updatedAt),
      })),
    },
  };
};

/**
 * v1 → v2 (issue 33): the record learns its phase (S1-R03), the stale-state and first-action checks, and a snapshot of
 * its counters at each interruption (S4). A v1 record's phase is unknown (null: set at its next model step, without a
 * `phase_changed` line, since nothing says what it was), its first action was never checked (left null: a first call
 * made before the check is not judged after the fact), and its todo list counts as changed at its current tool-call
 * count, so an upgrade does not raise a stale-todo warning for calls made before anyone counted them.
 */
export const v1ToV2: Step = (raw) => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, reason: "not a JSON object" };
  const v1 = raw as Record<string, unknown>;
  const counters = v1.counters as { toolCalls?: unknown } | undefined;
  const toolCalls = typeof counters?.toolCalls === "number" ? counters.toolCalls : 0;
  const todo = v1.todo && typeof v1.todo === "object" ? { ...(v1.todo as object), atToolCalls: toolCalls } : (v1.todo ?? null);
  // Only a v0 record (seed 003's metadata, through v0ToV1) knows its phase; v1 never stored one.
  const at = typeof v1.updatedAt === "number" ? v1.updatedAt : 0;
  const phase = typeof v1.phase === "string" && v1.phase.length <= 60 ? { phase: v1.phase, at } : null;
  const phaseHistory = phase ? [phase] : [];
  return { ok: true, value: { ...v1, schemaVersion: 2, todo, phase, phaseHistory, stale: [], firstAction: null, interruptions: [] } };
};

/** `MIGRATIONS[n]` turns a version-n record into version n+1. Each step is pure and total on its own input. */
const MIGRATIONS: Readonly<Record<number, Step>> = { 0: v0ToV1, 1: v1ToV2 };

/** The version a raw record claims; a record without `schemaVersion` predates versioning (v0). */
export function detectVersion(raw: unknown): { ok: true; version: number } | { ok: false; reason: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, reason: "not a JSON object" };
  if (!("schemaVersion" in raw)) return { ok: true, version: 0 };
  const version = raw.schemaVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
    return { ok: false, reason: `invalid schemaVersion: ${JSON.stringify(version)}` };
  }
  return { ok: true, version };
}

/**
 * Brings a raw record up to {@link CURRENT_SCHEMA_VERSION} and validates it. A record from a newer build is
 * rejected with a reason and never downgraded: the caller must leave its bytes intact.
 */
export function migrateRecord(raw: unknown): MigrateResult {
  const detected = detectVersion(raw);
  if (!detected.ok) return detected;
  const fromVersion = detected.version;
  if (fromVersion > CURRENT_SCHEMA_VERSION) {
    return {
      ok: false,
      reason: `schemaVersion ${fromVersion} was written by a newer opencode-governance (this one reads up to ${CURRENT_SCHEMA_VERSION})`,
    };
  }
  let value = raw;
  for (let version = fromVersion; version < CURRENT_SCHEMA_VERSION; version++) {
    const step = MIGRATIONS[version];
    if (!step) return { ok: false, reason: `no migration from schemaVersion ${version}` };
    const next = step(value);
    if (!next.ok) return { ok: false, reason: `migrating v${version}→v${version + 1}: ${next.reason}` };
    value = next.value;
  }
  const record = SessionRecord.safeParse(value);
  if (!record.success) return { ok: false, reason: `invalid v${CURRENT_SCHEMA_VERSION} record: ${z.prettifyError(record.error)}` };
  // Issue 26: a record the old sweep ended `orphaned` after an ordinary exit is read as what it was (crash-recovery.ts).
  return { ok: true, record: readWronglyOrphaned(record.data), fromVersion };
}
