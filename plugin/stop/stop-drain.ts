import { claimAll } from "../../governance/stop/directive-queue.ts";
import type { PluginContext } from "../runtime/context.ts";

/** Stop requests that arrive for (or outlive) a stopped session are done with: claimed and audited. */
export async function drainStops(ctx: PluginContext, sessionId: string): Promise<void> {
  const drained = await claimAll(ctx.paths, sessionId, { clock: ctx.clock, kinds: ["stop"] });
  if (drained.length > 0) await ctx.record("stop_ignored", { sessionId, count: drained.length, because: "already stopped" });
}
