import { closeChild, isRunningChild } from "../../governance/delegation/child-links.ts";
import type { ChildLink, SessionRecord } from "../../governance/session/session-record.ts";
import type { InterruptedWork } from "../../governance/texts/resume-context.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";
import { drainGuidance } from "../stop/stop-drain.ts";

const MAX_WALK = 50;
/** When the cascade of an abort is checked: anything still busy then is aborted by governance. */
const CASCADE_CHECK_MS = 1_000;

type Descendant = { record: SessionRecord; link: ChildLink };

/** The session's descendants in tree order (parents before children), read from their records. Bounded. */
export async function descendants(ctx: PluginContext, root: SessionRecord): Promise<Descendant[]> {
  const out: Descendant[] = [];
  const walk = async (r: SessionRecord): Promise<void> => {
    for (const link of r.children) {
      if (out.length >= MAX_WALK) return;
      const child = await ctx.store.read(link.sessionId);
      if (!child) continue;
      out.push({ record: child, link });
      await walk(child);
    }
  };
  await walk(root);
  return out;
}

/** What a resume context reports as cut off: descendants that were running or were interrupted, with their last calls. */
export async function interruptedWork(ctx: PluginContext, record: SessionRecord): Promise<InterruptedWork[]> {
  const all = await descendants(ctx, record);
  return all
    .filter(({ record: r, link }) => isRunningChild(link) || link.outcome === "aborted" || r.state === "interrupted" || r.control === "stopped")
    .map(({ record: r }) => ({
      sessionId: r.sessionId,
      agent: r.agent,
      depth: r.depth,
      lastToolCall: r.lastToolCall ? { tool: r.lastToolCall.tool, summary: r.lastToolCall.summary, at: r.lastToolCall.at } : null,
      state: r.control === "stopped" ? "stopped" : r.state,
    }));
}

/**
 * Escape / abort of a session: OpenCode 1.18 cascades the abort to running descendants itself; governance records
 * each running descendant interrupted (keeping its last tool call for the resume context), then verifies that none
 * is still busy and aborts any that is.
 */
export async function interruptDescendants(runner: EffectRunner, sessionId: string): Promise<void> {
  const { ctx } = runner;
  const root = await ctx.store.read(sessionId);
  if (!root) return;
  const running = (await descendants(ctx, root)).filter((d) => isRunningChild(d.link) && d.record.control !== "completed");
  const at = ctx.clock.now();
  for (const { record } of running) {
    await runner.dispatch(record.sessionId, { type: "aborted", at });
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
