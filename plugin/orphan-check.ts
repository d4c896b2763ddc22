import { findOrphans } from "../governance/session/orphans.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import type { Governor } from "./governor.ts";

/**
 * Seed 000's orphan detection, run when a delegating session starts or resumes in this process: children still
 * marked running with no tool call for `orphans.staleAfter` (10 min) and not busy in OpenCode are closed as
 * `orphaned` and listed in the parent's governance context.
 */
export async function checkOrphans(gov: Governor, parent: SessionRecord): Promise<void> {
  const running = parent.children.filter((c) => c.outcome === "running");
  if (running.length === 0) return;
  const records = new Map<string, SessionRecord>();
  for (const link of running) {
    const r = await gov.store.read(link.sessionId);
    if (r) records.set(link.sessionId, r);
  }
  const status = await gov.api.status();
  const now = gov.clock.now();
  const orphans = findOrphans(running, records, {
    now,
    staleMs: gov.config.orphans.staleAfter,
    isBusy: (id) => Boolean(status?.[id] ?? gov.status.get(id)),
  });
  if (orphans.length === 0) return;
  for (const o of orphans) {
    await gov.update(o.sessionId, (c) => (c && c.control === "active" ? { ...c, control: "orphaned" } : c));
    await gov.update(parent.sessionId, (p) =>
      p ? { ...p, children: p.children.map((c) => (c.sessionId === o.sessionId ? { ...c, outcome: "orphaned", closedAt: now } : c)) } : p,
    );
    await gov.record("orphan_closed", { sessionId: o.sessionId, parentId: parent.sessionId, staleForMs: o.staleForMs, basis: o.basis });
  }
  gov.orphans.set(
    parent.sessionId,
    orphans.map((o) => ({ sessionId: o.sessionId, agent: o.agent, idleMs: o.staleForMs })),
  );
}
