import { claimAll, type StopDirective } from "../../governance/stop/directive-queue.ts";
import { ignoredStops, type StopDrainReason } from "../../governance/stop/stop-requests.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { PluginContext } from "../runtime/context.ts";

/**
 * Stop requests that arrive for (or outlive) a stopped or finished session are done with: claimed, and those it did
 * not act on audited (`ignoredStops`).
 */
export async function drainStops(
  ctx: PluginContext,
  record: SessionRecord | undefined,
  sessionId: string,
  because: StopDrainReason = "already stopped",
): Promise<void> {
  const ignored = ignoredStops(record, await claimAll(ctx.paths, sessionId, { clock: ctx.clock, kinds: ["stop"] }));
  if (ignored.length > 0) await ctx.record("stop_ignored", { sessionId, count: ignored.length, because, requestIds: ignored.map((d) => d.id) });
}

/**
 * Requests seen for the first time that ask no more than the stop under way change nothing, but their sender waits to
 * hear they were taken (governance/stop/stop-ack.ts): each is audited `stop_covered` once.
 */
export async function ackCovered(
  ctx: PluginContext,
  sessionId: string,
  record: SessionRecord | undefined,
  fresh: readonly StopDirective[],
  begun: readonly StopDirective[],
): Promise<void> {
  const pendingLevel = record?.control === "stopping" ? record.stop?.nextLevel : undefined;
  if (pendingLevel === undefined) return;
  for (const d of fresh) if (!begun.includes(d)) await ctx.record("stop_covered", { sessionId, requestId: d.id, level: d.level, pendingLevel });
}
