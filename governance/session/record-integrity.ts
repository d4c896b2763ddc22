import type { SessionHost, SessionRecord } from "./session-record.ts";

/**
 * A record on disk is a file any process of the user can write — a subagent's `bash` included (issue 27): resetting
 * its counters bought it 13 calls against a limit of 4, and rewriting its control fields made a user's stop never
 * escalate. The process that hosts a session is the only writer of that session's record, so what it wrote last is
 * the truth for the fields that limit and stop the session. Before each locked read-modify-write the stored record is
 * reconciled with that copy: use never goes down (counters and budget use are the larger of both), and the control,
 * stop, budget escalation, raises and hierarchy are this process's own. Each field found changed is named, so the
 * caller audits `record_tampered`.
 *
 * A record whose `hostedBy` names another live process was taken over by that process (a resume elsewhere): it is
 * left as stored, and the caller drops its copy — unless this process is running the session right now (a turn or a
 * stop under way here) or the named process is provably gone: then the rewrite is tampering (issue 41: `hostedBy` set
 * to pid 1 after the user's L1 ended the ladder there). A record missing or undecodable while this process hosts the
 * session is restored whole from its copy (`reason` says why). Pure: the facts about processes are passed in.
 */
export type Reconciled = { record: SessionRecord; tampered: string[]; moved: boolean; reason?: TamperReason };

/** Why a stored record was not accepted as it stood. */
export type TamperReason = "unreadable" | "host_rewritten" | "rewritten";

/** What the hosting process knows that the record does not say. */
export type HostFacts = {
  /** This process is running the session now (a turn, unwritten activity or a stop under way here). */
  activeHere: boolean;
  /** The named host is provably gone (no such process, or another process under its pid). */
  hostGone: (host: SessionHost) => boolean;
};

const NO_FACTS: HostFacts = { activeHere: false, hostGone: () => false };

/**
 * The check before each write of a session this process hosts: the stored record (`undefined` when it is missing,
 * could not be decoded, or was written in a format this build does not read) against this process's own copy.
 */
export function checkStoredRecord(stored: SessionRecord | undefined, ours: SessionRecord | undefined, facts: HostFacts = NO_FACTS): Reconciled | undefined {
  if (!ours) return stored ? { record: stored, tampered: [], moved: false } : undefined;
  if (!stored) return { record: ours, tampered: ["record"], moved: false, reason: "unreadable" };
  return reconcileRecord(stored, ours, facts);
}

const COUNTERS = ["toolCalls", "modelSteps", "violations", "compactions", "resumes"] as const;
const TOKENS = ["input", "output", "reasoning", "cacheRead", "cacheWrite"] as const;
/** Fields only the hosting process changes, taken from its copy whenever the stored one differs. */
const OWNED = ["control", "stop", "stoppedAt", "end", "parentId", "rootId", "depth", "level", "agent", "attest"] as const;

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function sameHost(a: SessionRecord["hostedBy"], b: SessionRecord["hostedBy"]): boolean {
  return (a ?? null) === (b ?? null) || (a?.host === b?.host && a?.pid === b?.pid && a?.start === b?.start);
}

export function reconcileRecord(stored: SessionRecord, ours: SessionRecord, facts: HostFacts = NO_FACTS): Reconciled {
  if (stored === ours) return { record: stored, tampered: [], moved: false };
  const otherHost = !sameHost(stored.hostedBy, ours.hostedBy) ? stored.hostedBy : null;
  const holdsHere = facts.activeHere || ours.control === "stopping";
  if (otherHost && !holdsHere && !facts.hostGone(otherHost)) return { record: stored, tampered: [], moved: true };
  const tampered: string[] = [];
  const record: SessionRecord = { ...stored };
  if (!sameHost(stored.hostedBy, ours.hostedBy)) {
    tampered.push("hostedBy");
    record.hostedBy = ours.hostedBy ?? null;
  }
  for (const field of OWNED) {
    if (same(stored[field], ours[field])) continue;
    tampered.push(field);
    (record as Record<string, unknown>)[field] = ours[field];
  }
  const counters = { ...stored.counters };
  for (const k of COUNTERS) {
    if (counters[k] >= ours.counters[k]) continue;
    tampered.push(`counters.${k}`);
    counters[k] = ours.counters[k];
  }
  record.counters = counters;
  const sb = stored.budget;
  const ob = ours.budget;
  const budget = { ...sb, tokens: { ...sb.tokens } };
  for (const k of TOKENS) {
    if (budget.tokens[k] >= ob.tokens[k]) continue;
    tampered.push(`budget.tokens.${k}`);
    budget.tokens[k] = ob.tokens[k];
  }
  for (const k of ["cost", "activeMs"] as const) {
    if (budget[k] >= ob[k]) continue;
    tampered.push(`budget.${k}`);
    budget[k] = ob[k];
  }
  for (const k of ["tree", "session", "treeEscalation", "raises", "busySince", "costReported"] as const) {
    if (same(sb[k], ob[k])) continue;
    tampered.push(`budget.${k}`);
    (budget as Record<string, unknown>)[k] = ob[k];
  }
  record.budget = budget;
  if (tampered.length === 0) return { record: stored, tampered, moved: false };
  return { record, tampered, moved: false, reason: tampered.includes("hostedBy") ? "host_rewritten" : "rewritten" };
}
