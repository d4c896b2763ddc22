import type { AgentRole } from "../config/config-schema.ts";
import { audit, type Effect, type Step } from "./effects.ts";
import { firstActionCheck } from "./first-action.ts";
import { notePhase } from "./session-history.ts";
import type { SessionRecord } from "./session-record.ts";
import { staleKinds, staleWarnings } from "./stale-state.ts";

/** The fields of a machine event the checks read (session-machine.ts passes its parsed event). */
export type CheckedEvent = { type: string; at: number; phase?: string | undefined; role?: AgentRole | undefined; tool?: string };

/**
 * The checks every machine event runs after its own field updates: the phase the event carries (S1-R03), the first
 * action on the session's first tool call (S1 "First Action Required"), and which stale-state warnings hold now.
 * `before` is the record the event started from. Pure.
 */
export function applyChecks(before: SessionRecord, next: SessionRecord, ev: CheckedEvent): SessionRecord {
  let r = notePhase(next, ev.phase, ev.at);
  if (ev.type === "tool_before" && before.firstTool === null && r.firstAction === null && ev.role && ev.tool) {
    r = { ...r, firstAction: firstActionCheck(ev.role, ev.tool, ev.at) };
  }
  const stale = staleKinds(r, ev.at);
  return sameKinds(stale, r.stale) ? r : { ...r, stale };
}

/**
 * What the checks audit, from the difference between two records: `phase_changed` when the phase moved (not when an
 * older record first learns it), `first_action_missed` once, when the first call is checked and misses, and
 * `state_stale` once per warning as it is raised (a warning that clears and comes back is audited again).
 */
export function checkEffects(before: SessionRecord, after: SessionRecord, at: number): Effect[] {
  const effects: Effect[] = [];
  if (before.phase && after.phase && before.phase.phase !== after.phase.phase) {
    effects.push(audit("phase_changed", { from: before.phase.phase, to: after.phase.phase, since: before.phase.at }));
  }
  if (before.firstAction === null && after.firstAction && !after.firstAction.ok) {
    effects.push(audit("first_action_missed", { agent: after.agent, role: after.firstAction.role, tool: after.firstAction.tool }));
  }
  const raised = after.stale.filter((k) => !before.stale.includes(k));
  for (const w of staleWarnings(after, at)) if (raised.includes(w.kind)) effects.push(audit("state_stale", { ...w, agent: after.agent }));
  return effects;
}

/**
 * The periodic check of a hosted session (plugin/sessions/maintenance.ts): a warning that needs no event to become
 * true — a turn with no activity for an hour — is raised and audited here. The record itself when nothing changed.
 */
export function noteStale(r: SessionRecord, now: number): Step {
  const stale = staleKinds(r, now);
  if (sameKinds(stale, r.stale)) return { next: r, effects: [] };
  const next = { ...r, stale };
  return { next, effects: checkEffects(r, next, now) };
}

function sameKinds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((k, i) => b[i] === k);
}
