import * as z from "../zod.ts";
import { MAX_INTERRUPTIONS, MAX_PHASE_HISTORY, type SessionRecord } from "./session-record.ts";

/** The config phase (S1-R03) as the machine's events carry it (those that start a record, and each model step). */
export const PhaseName = z.string().trim().min(1).max(60).optional();

/**
 * S1-R03 "store session metadata with phase info": the record keeps the config phase it works under, and a change of
 * the phase in governance.yaml while the session lives is one more entry in its `phaseHistory` (the machine audits it
 * `phase_changed`). `phase` undefined (an event that does not carry it) or unchanged returns the record itself.
 */
export function notePhase(r: SessionRecord, phase: string | undefined, at: number): SessionRecord {
  if (phase === undefined || r.phase?.phase === phase) return r;
  const mark = { phase: phase.slice(0, 60), at };
  return { ...r, phase: mark, phaseHistory: [...r.phaseHistory, mark].slice(-MAX_PHASE_HISTORY) };
}

/**
 * S4 "archive stats to history": at an interruption, what the session had done — its counters, the state it was cut
 * off in, its last tool call and todo count — is kept beside the interruption (newest last, the last ten), so a
 * resume, `sessions --json` and the dashboard can say how far it got.
 */
export function noteInterruption(r: SessionRecord, at: number): SessionRecord["interruptions"] {
  const todo = r.todo ? { total: r.todo.total, open: r.todo.open } : null;
  const snapshot = { at, state: r.state, counters: { ...r.counters }, lastToolCall: r.lastToolCall, todo };
  return [...r.interruptions, snapshot].slice(-MAX_INTERRUPTIONS);
}
