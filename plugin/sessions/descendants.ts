import { closeChild } from "../../governance/session/child-links.ts";
import { cutOffWork, MAX_DESCENDANTS, planCascade } from "../../governance/delegation/descendants.ts";
import type { SessionEvent } from "../../governance/session/session-machine.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { Step } from "../../governance/session/effects.ts";
import type { InterruptedWork } from "../../governance/texts/resume-context.ts";
import type { PluginContext } from "../runtime/context.ts";
import { claimAll } from "../../governance/stop/directive-queue.ts";

/** What the cascade asks of the effect runner that calls it (its caller: no import back, no cycle). */
type Runner = {
  readonly ctx: PluginContext;
  dispatch(sessionId: string, event: SessionEvent): Promise<unknown>;
  step(sessionId: string, fn: (current: SessionRecord | undefined) => Step): Promise<unknown>;
};

/** When the cascade of an abort is checked: anything still busy then is aborted by governance. */
const CASCADE_CHECK_MS = 1_000;

/** The records of `root`'s subtree, read from the store (bounded, cycle-safe); the core decides what they mean. */
async function subtree(ctx: Pick<PluginContext, "store">, root: SessionRecord): Promise<Map<string, SessionRecord>> {
  const byId = new Map<string, SessionRecord>();
  const walk = async (r: SessionRecord): Promise<void> => {
    for (const link of r.children) {
      if (byId.size >= MAX_DESCENDANTS || byId.has(link.sessionId) || link.sessionId === root.sessionId) continue;
      const child = await ctx.store.read(link.sessionId);
      if (!child) continue;
      byId.set(child.sessionId, child);
      await walk(child);
    }
  };
  await walk(root);
  return byId;
}

/** What a resume context reports as cut off (the core's `cutOffWork`, the same function `resume` previews with). */
export async function interruptedWork(ctx: Pick<PluginContext, "store">, record: SessionRecord): Promise<InterruptedWork[]> {
  return cutOffWork(record, await subtree(ctx, record));
}

/**
 * Guidance queued for a descendant cut off by an Escape higher up: nothing will run in it to read it (a later `task`
 * resume starts a new piece of work), so it is claimed and audited `inject_dropped` rather than left queued forever.
 */
export async function drainGuidance(ctx: PluginContext, sessionId: string, because: string): Promise<void> {
  const drained = await claimAll(ctx.paths, sessionId, { clock: ctx.clock, kinds: ["inject"] });
  if (drained.length > 0) await ctx.record("inject_dropped", { sessionId, count: drained.length, injectIds: drained.map((d) => d.id), because });
}

/**
 * Escape / abort of a session: OpenCode 1.18 cascades the abort to running descendants itself; governance records
 * each running descendant interrupted (keeping its last tool call for the resume context), then verifies that none
 * is still busy and aborts any that is. The core plans the whole subtree once (`planCascade`); each descendant's
 * abort is dispatched as part of the cascade, so it does not start a cascade of its own.
 */
export async function interruptDescendants(runner: Runner, sessionId: string): Promise<void> {
  const { ctx } = runner;
  const root = await ctx.store.read(sessionId);
  if (!root) return;
  const running = planCascade(root, await subtree(ctx, root));
  const at = ctx.clock.now();
  for (const { record } of running) {
    await runner.dispatch(record.sessionId, { type: "aborted", at, cascade: true });
    if (record.parentId) await runner.step(record.parentId, (p) => closeChild(p, record.sessionId, "aborted", at));
    await drainGuidance(ctx, record.sessionId, `interrupted: ${sessionId} above it was aborted (Escape)`);
  }
  if (root.parentId) await runner.step(root.parentId, (p) => closeChild(p, sessionId, "aborted", at));
  if (running.length === 0) return;
  const ids = running.map((d) => d.record.sessionId);
  await ctx.record("descendants_interrupted", { sessionId, count: running.length, ids });
  const check = async () => {
    const status = await ctx.api.status();
    for (const id of ids.filter((i) => status?.[i])) {
      await ctx.api.abort(id);
      await ctx.record("descendant_aborted", { sessionId: id, rootId: sessionId });
    }
  };
  ctx.timers.setTimeout(() => check().catch((e) => ctx.reportHookError("interrupt-descendants", e)), CASCADE_CHECK_MS);
}
