import { roleOf } from "../../governance/delegation-policy.ts";
import { buildCompactionContext } from "../../governance/texts/compaction-context.ts";
import type { Governor } from "../governor.ts";

/**
 * `experimental.session.compacting`: asks the summarizer to carry over anchors, the last three governance-relevant
 * actions, the language and the hierarchy (S2-R02..R06). The state change itself waits for `session.compacted`.
 */
export async function compacting(gov: Governor, input: { sessionID: string }, output: { context: string[] }): Promise<void> {
  const record = (await gov.ensureSeen(input.sessionID)) ?? gov.peek(input.sessionID);
  const agent = record?.agent ?? gov.agents.get(input.sessionID) ?? null;
  const policy = roleOf(agent, gov.config);
  output.context.push(
    ...buildCompactionContext({
      language: gov.config.language,
      phase: gov.config.phase,
      anchors: gov.config.anchors,
      recentActions: record?.recentActions ?? [],
      agent,
      role: policy.role,
      level: record?.level ?? 1,
      depth: record?.depth ?? 0,
      maxDepth: gov.config.delegation.maxDepth,
      mayDelegateTo: policy.mayDelegateTo,
    }),
  );
  await gov.record("compaction_context_added", { sessionId: input.sessionID, lines: output.context.length });
}

/**
 * `experimental.compaction.autocontinue` runs only for a compaction OpenCode started itself (observed in 1.18: before
 * `session.compacted`, with `overflow: false` when the threshold was crossed between turns); a user's summarize never
 * reaches it. So it marks the compaction "auto"; should it ever arrive after `session.compacted`, the history entry
 * written as "summarize" is corrected.
 */
export async function markAutoCompaction(gov: Governor, input: { sessionID: string }): Promise<void> {
  gov.autoCompacting.add(input.sessionID);
  await gov.update(input.sessionID, (r) => {
    const last = r?.compactionHistory.at(-1);
    if (!r || !last || last.trigger !== "summarize" || gov.clock.now() - last.at > 30_000) return r;
    return { ...r, compactionHistory: [...r.compactionHistory.slice(0, -1), { ...last, trigger: "auto" }] };
  });
}
