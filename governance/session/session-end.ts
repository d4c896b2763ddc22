import { closeChild } from "./child-links.ts";
import { confirmStopped } from "./stopped.ts";
import { audit, type Step } from "./effects.ts";
import type { SessionEnd, SessionRecord } from "./session-record.ts";

/**
 * Seed 002: every exit path releases the bookkeeping. A session's work ends by completion, failure, deletion, or
 * because no process hosts it any more (a crash; found by orphan detection). An abort needs no end: the record is
 * `interrupted` (resumable, and not running) and the parent's link `aborted` (session-machine.ts, descendants.ts). Each ends the record and the
 * parent's link in a state that says which — never "running" for something nobody runs.
 *
 * Pure steps over one record each; the adapter (plugin/hooks/event.ts, tool-after.ts, sessions/orphan-check.ts)
 * feeds the host's signals.
 */
export type EndHow = SessionEnd["how"];

/** What the record's control becomes: the session is no longer running and cannot be stopped. */
const CONTROL_AFTER: Record<EndHow, SessionRecord["control"]> = {
  completed: "completed",
  failed: "completed",
  deleted: "completed",
  orphaned: "orphaned",
};

/** The parent link's outcome for each end (an orphan's link is closed by `orphanChild`, child-links.ts). */
const LINK_AFTER = { completed: "completed", failed: "failed", deleted: "aborted" } as const;

/**
 * Ends a session's record: `end` says how, `control` leaves `active`/`stopping`. A session being stopped whose work
 * completes (its task returned its final answer) obeyed the stop: it is `stopped` as `compliance`, through the
 * ladder's one `confirmStopped` (the parent is told once) — whether OpenCode's idle or the parent's task result
 * arrives first. A stop in progress ends with a failure or deletion: the work it was meant to stop is over. A stopped
 * session keeps `stopped` (what the user asked for happened) and only gains `end`. Idempotent: the first end stays,
 * except a deletion, which is final whatever came before. Only the step that ends it reports `session_ended`.
 */
export function endSession(record: SessionRecord | undefined, how: EndHow, at: number, detail: string | null = null): Step {
  if (!record) return { next: record, effects: [] };
  if (record.end && (how !== "deleted" || record.end.how === "deleted")) return { next: record, effects: [] };
  if (how === "completed" && record.control === "stopping") {
    const obeyed = confirmStopped(record, at, "compliance");
    const ended = endSession(obeyed.next, how, at, detail);
    return { next: ended.next, effects: [...obeyed.effects, ...ended.effects] };
  }
  const running = record.control === "active" || record.control === "stopping";
  const control = running ? CONTROL_AFTER[how] : record.control;
  const end: SessionEnd = { at, how, detail: detail?.slice(0, 200) ?? null };
  const next: SessionRecord = { ...record, control, end, updatedAt: Math.max(record.updatedAt, at) };
  return { next, effects: [audit("session_ended", { how, detail: end.detail, control, wasStopping: record.control === "stopping" })] };
}

/** The parent side of {@link endSession}: its link to the child is closed with the matching outcome (once). */
export function endChildLink(parent: SessionRecord | undefined, childId: string, how: keyof typeof LINK_AFTER, at: number): Step {
  return closeChild(parent, childId, LINK_AFTER[how], at);
}

/**
 * Whether a `session.error` (not an abort) ends the session's work: for a child it does — its `task` returns the
 * error to the parent and nobody drives the child any more. A root session stays open: its user may prompt again.
 */
export function errorEndsSession(record: SessionRecord | undefined): boolean {
  return record !== undefined && record.parentId !== null && (record.control === "active" || record.control === "stopping");
}
