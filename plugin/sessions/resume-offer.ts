import { type LaunchResume, launchResume } from "../../governance/host/launch-args.ts";
import { processCommandLine } from "../runtime/command-line.ts";
import { resumableRoots } from "../../governance/session/resumable-roots.ts";
import { resumeOfferText, rootsToOffer } from "../../governance/texts/resume-offer.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { InFlight } from "../runtime/in-flight.ts";

/**
 * Once per plugin start: when the project has a root session the user can resume (governance/session/resumable-roots.ts),
 * one toast naming the most recent one with its `opencode -s <id>` command, and the audit line `resume_offered` — not
 * the session this start itself opens (`launch`: `opencode -s <id>`, `-c`). Called when a client is there (the runtime's
 * `clientActive`), not at a fixed time after the start. Reads every record once; never throws.
 */
export async function offerResumable(ctx: PluginContext, launch: LaunchResume): Promise<void> {
  try {
    const config = ctx.config;
    const all = resumableRoots(await ctx.store.list(), {
      now: ctx.clock.now(),
      minIdleMs: config.resume.minIdle,
      maxIdleMs: config.resume.maxIdle,
      trust: ctx.trust,
    });
    const roots = rootsToOffer(all, launch);
    const text = resumeOfferText(roots);
    if (!text) return;
    const ids = roots.slice(0, 10).map((r) => r.record.sessionId);
    await ctx.record("resume_offered", { sessionId: ids[0], sessionIds: ids, count: roots.length });
    await ctx.api.toast(text, "info");
  } catch {
    // A notice, not governance: a failed read or toast must not reach the user's session.
  }
}

/**
 * The offer's trigger: the first model output of any session after the start (each host's event source calls
 * `clientActive`). Then a client is there and showing a session; a toast sent a fixed 2 s after the start reached
 * nobody when the TUI painted later (decision 0032). Once per process.
 */
export class ResumeOffer {
  #done = false;
  readonly #launch: LaunchResume;
  constructor(
    private readonly ctx: PluginContext,
    private readonly inFlight: InFlight,
    argv: readonly string[] = processCommandLine(),
  ) {
    this.#launch = launchResume(argv);
  }

  clientActive(): void {
    if (this.#done) return;
    this.#done = true;
    void this.inFlight.track(() => offerResumable(this.ctx, this.#launch))();
  }
}
