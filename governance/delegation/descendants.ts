import { isRunningChild } from "../session/running.ts";
import type { ChildLink, SessionRecord } from "../session/session-record.ts";

/** A descendant an interruption cut off, as the resume context lists it. */
export interface InterruptedWork {
  sessionId: string;
  agent: string | null;
  /** Exact depth; the list is indented relative to the shallowest entry. */
  depth: number;
  lastToolCall: { tool: string; summary: string; at: number } | null;
  /** Where it stood, e.g. a lifecycle state or control status ("running", "stopped", "interrupted"). */
  state: string;
}

/**
 * A session's descendants and what an interruption means for them, as pure functions over records the caller read.
 * The plugin (cascade of an abort, resume context) and the CLI (`resume`, the dashboard's "Resumable") ask the same
 * functions, so `opencode-governance resume` previews exactly the context the plugin builds.
 */

/** At most this many descendants are walked (a tree bigger than this is a bug or an attack, not a workload). */
export const MAX_DESCENDANTS = 50;

export type Descendant = { record: SessionRecord; link: ChildLink };

/** The descendants of `root` in tree order (parents before children), bounded and cycle-safe; unknown ids skipped. */
export function descendantsOf(root: SessionRecord, byId: ReadonlyMap<string, SessionRecord>, max = MAX_DESCENDANTS): Descendant[] {
  const out: Descendant[] = [];
  const seen = new Set<string>([root.sessionId]);
  const walk = (r: SessionRecord): void => {
    for (const link of r.children) {
      if (out.length >= max || seen.has(link.sessionId)) continue;
      seen.add(link.sessionId);
      const child = byId.get(link.sessionId);
      if (!child) continue;
      out.push({ record: child, link });
      walk(child);
    }
  };
  walk(root);
  return out;
}

/**
 * Cut off by an interruption: a descendant whose work did not end by itself — its link still running or closed as
 * aborted, or its own record interrupted. A subagent whose stop ran its course is not (its parent already has the
 * stop note, and its final answer when it gave one): listing it as interrupted work invited the model to redo what
 * the user had stopped (issue 39 walks).
 */
export function isCutOff({ record, link }: Descendant): boolean {
  if (isRunningChild(link)) return true;
  // A stop that ran its course (L1-L3 or its hard abort) was the user's or governance's decision, and the parent was
  // told in its stop note: not work an interruption cut off, whatever its task's outcome (second issue 39 walk: a
  // worker hard-stopped in an earlier, finished turn was listed as interrupted work).
  if (record.control === "stopped") return false;
  return link.outcome === "aborted" || record.state === "interrupted";
}

/** What a resume context reports as cut off, with each one's last tool call. */
export function cutOffWork(root: SessionRecord, byId: ReadonlyMap<string, SessionRecord>): InterruptedWork[] {
  return descendantsOf(root, byId)
    .filter(isCutOff)
    .map(({ record: r }) => ({
      sessionId: r.sessionId,
      agent: r.agent,
      depth: r.depth,
      lastToolCall: r.lastToolCall ? { tool: r.lastToolCall.tool, summary: r.lastToolCall.summary, at: r.lastToolCall.at } : null,
      state: r.control === "stopped" ? "stopped" : r.state,
    }));
}

/**
 * The cascade of an abort of `root` (S4), planned once for the whole subtree: every descendant whose link is still
 * running (and whose task did not complete) is recorded interrupted and its link closed. Each of them is interrupted
 * as part of this cascade (the machine's `aborted` event with `cascade: true`), which does not cascade again: root →
 * A → B interrupts B once, not once for root and again for A.
 */
export function planCascade(root: SessionRecord, byId: ReadonlyMap<string, SessionRecord>): Descendant[] {
  return descendantsOf(root, byId).filter(({ record, link }) => isRunningChild(link) && record.control !== "completed");
}
