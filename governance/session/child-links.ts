import { audit, type Step } from "./effects.ts";
import { isRunningChild } from "./running.ts";
import type { ChildLink, SessionRecord } from "./session-record.ts";

/**
 * The parent ↔ child bookkeeping of delegation (seed 000 registry), as pure steps over one record each. A link is
 * opened when the child is created, closed once when its task ends (however it ends), or by orphan detection.
 */

export { isRunningChild };

export type ChildEnd = "completed" | "aborted" | "failed";

/** Parent side of a new child (S1): listed once, `running`. */
export function linkChild(parent: SessionRecord | undefined, child: { sessionId: string; agent: string | null; createdAt: number; depth: number }): Step {
  if (!parent || parent.children.some((c) => c.sessionId === child.sessionId)) return { next: parent, effects: [] };
  const link: ChildLink = { sessionId: child.sessionId, agent: child.agent, createdAt: child.createdAt, closedAt: null, outcome: "running" };
  return {
    next: { ...parent, children: [...parent.children, link] },
    effects: [audit("child_linked", { childId: child.sessionId, agent: child.agent, depth: child.depth })],
  };
}

/**
 * Parent side of a child's task that ended (completed, failed or aborted): the link is closed once, keeping an
 * outcome already set (e.g. orphaned). Idempotent; only the closing call reports `child_closed`.
 */
export function closeChild(parent: SessionRecord | undefined, childId: string, end: ChildEnd, at: number): Step {
  const link = parent?.children.find((c) => c.sessionId === childId);
  if (!parent || !link || link.closedAt !== null) return { next: parent, effects: [] };
  const children = parent.children.map((c) => (c.sessionId === childId ? { ...c, closedAt: at, outcome: isRunningChild(c) ? end : c.outcome } : c));
  return { next: { ...parent, children }, effects: [audit("child_closed", { childId, outcome: end })] };
}

/** Parent side of an orphan (seed 000): the link is closed as `orphaned`. */
export function orphanChild(parent: SessionRecord | undefined, childId: string, at: number): Step {
  if (!parent) return { next: parent, effects: [] };
  const children = parent.children.map((c) => (c.sessionId === childId ? { ...c, outcome: "orphaned" as const, closedAt: at } : c));
  return { next: { ...parent, children }, effects: [] };
}

/** Child side of an orphan: an active child becomes `orphaned`; the closing is reported with why. */
export function markOrphaned(child: SessionRecord | undefined, why: { parentId: string; staleForMs: number; basis: string }): Step {
  const next = child && child.control === "active" ? { ...child, control: "orphaned" as const } : child;
  return { next, effects: [audit("orphan_closed", why)] };
}
