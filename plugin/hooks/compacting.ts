import { buildCompactionContext } from "../../governance/texts/compaction-context.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionRuntime } from "../sessions/session-runtime.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";

/** What a compaction uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type CompactionDeps = {
  readonly ctx: Pick<PluginContext, "clock" | "config" | "viewOf" | "record">;
  readonly tracker: Pick<SessionTracker, "ensureSeen">;
  readonly sessions: Pick<SessionRuntime, "peek">;
  readonly runner: Pick<EffectRunner, "dispatch">;
};

/**
 * A compaction about to run (OpenCode 1 `experimental.session.compacting`, OpenCode 2 `session.hook("compaction")`):
 * answers what the summarizer is asked to carry over anchors, the last three governance-relevant
 * actions, the language and the hierarchy (S2-R02..R06). The state change itself waits for the compaction to finish.
 */
export async function compactionContext(rt: CompactionDeps, sessionId: string): Promise<string[]> {
  const { ctx, tracker, sessions } = rt;
  // The live record, not the one first seen: actions remembered and the agent learned since then must be carried over.
  const seen = await tracker.ensureSeen(sessionId);
  const record = sessions.peek(sessionId) ?? seen;
  const agent = record?.agent ?? null;
  const config = ctx.config;
  const context = buildCompactionContext({
    language: config.language,
    phase: config.phase,
    anchors: config.anchors,
    recentActions: record?.recentActions ?? [],
    who: ctx.viewOf(agent, record?.depth ?? 0),
  });
  await ctx.record("compaction_context_added", { sessionId, lines: context.length });
  return context;
}

/**
 * `experimental.compaction.autocontinue` runs only for a compaction OpenCode started itself (observed in 1.18: awaited
 * after the summary and before the synthetic "continue" step, and before `session.compacted` reaches plugins; a
 * user's summarize never reaches it). The compaction is recorded here (`auto`), so that "continue" step already
 * carries the post-compaction reminder; the machine counts it once whichever of the two signals comes first.
 */
export async function markAutoCompaction(rt: CompactionDeps, sessionId: string): Promise<void> {
  const id = sessionId;
  await rt.tracker.ensureSeen(id);
  await rt.runner.dispatch(id, { type: "compacted", at: rt.ctx.clock.now(), trigger: "auto" });
}
