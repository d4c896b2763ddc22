import { isRunningChild, markOrphaned, orphanChild } from "../../governance/session/child-links.ts";
import { findOrphans } from "../../governance/session/orphans.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { OrphanNote } from "../../governance/texts/status-note.ts";
import type { EffectRunner } from "./effect-runner.ts";

/**
 * Seed 000's orphan detection, run when a delegating session starts or resumes in this process: children still
 * marked running with no tool call for `orphans.staleAfter` (10 min) and not busy in OpenCode are closed as
 * `orphaned`. Returns them for the parent's status note.
 */
export async function checkOrphans(runner: EffectRunner, parent: SessionRecord, isBusy: (id: string) => boolean): Promise<OrphanNote[]> {
  const { ctx } = runner;
  const running = parent.children.filter(isRunningChild);
  if (running.length === 0) return [];
  const records = new Map<string, SessionRecord>();
  for (const link of running) {
    const r = await ctx.store.read(link.sessionId);
    if (r) records.set(link.sessionId, r);
  }
  const status = await ctx.api.status();
  const now = ctx.clock.now();
  const orphans = findOrphans(running, records, {
    now,
    staleMs: ctx.config.orphans.staleAfter,
    isBusy: (id) => Boolean(status?.[id]) || isBusy(id),
  });
  for (const o of orphans) {
    const why = { parentId: parent.sessionId, staleForMs: o.staleForMs, basis: o.basis };
    await runner.step(o.sessionId, (c) => markOrphaned(c, why));
    await runner.step(parent.sessionId, (p) => orphanChild(p, o.sessionId, now));
  }
  return orphans.map((o) => ({ sessionId: o.sessionId, agent: o.agent, idleMs: o.staleForMs }));
}
