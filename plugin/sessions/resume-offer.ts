import { resumableRoots } from "../../governance/session/resumable-roots.ts";
import { resumeOfferText } from "../../governance/texts/resume-offer.ts";
import type { PluginContext } from "../runtime/context.ts";

/**
 * How long after the plugin starts the offer is made: the TUI subscribes to the server's events while the instance
 * boots, and a toast published before that is shown to nobody.
 */
export const RESUME_OFFER_DELAY_MS = 2_000;

/**
 * Once per plugin start: when the project has a root session the user can resume (governance/session/resumable-roots.ts),
 * one toast naming the most recent one with its `opencode -s <id>` command, and the audit line `resume_offered`.
 * Reads every record once (behind the start, like the maintenance sweep); never throws.
 */
export async function offerResumable(ctx: PluginContext): Promise<void> {
  try {
    const config = ctx.config;
    const roots = resumableRoots(await ctx.store.list(), {
      now: ctx.clock.now(),
      minIdleMs: config.resume.minIdle,
      maxIdleMs: config.resume.maxIdle,
      trust: ctx.trust,
    });
    const text = resumeOfferText(roots);
    if (!text) return;
    const ids = roots.slice(0, 10).map((r) => r.record.sessionId);
    await ctx.record("resume_offered", { sessionId: ids[0], sessionIds: ids, count: roots.length });
    await ctx.api.toast(text, "info");
  } catch {
    // A notice, not governance: a failed read or toast must not reach the user's session.
  }
}
