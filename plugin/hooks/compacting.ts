import { roleOf } from "../../governance/delegation/delegation-policy.ts";
import { buildCompactionContext } from "../../governance/texts/compaction-context.ts";
import type { Governor } from "../governor.ts";

/**
 * `experimental.session.compacting`: asks the summarizer to carry over anchors, the last three governance-relevant
 * actions, the language and the hierarchy (S2-R02..R06). The state change itself waits for `session.compacted`.
 */
export async function compacting(gov: Governor, input: { sessionID: string }, output: { context: string[] }): Promise<void> {
  const record = (await gov.ensureSeen(input.sessionID)) ?? gov.peek(input.sessionID);
  const agent = record?.agent ?? null;
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
 * `experimental.compaction.autocontinue` runs only for a compaction OpenCode started itself (observed in 1.18: awaited
 * after the summary and before the synthetic "continue" step, and before `session.compacted` reaches plugins; a
 * user's summarize never reaches it). The compaction is recorded here, so that "continue" step already carries the
 * post-compaction reminder, and the `session.compacted` event that follows is not counted twice. Should the event
 * ever come first, its entry is only corrected to "auto".
 */
export async function markAutoCompaction(gov: Governor, input: { sessionID: string }): Promise<void> {
  const id = input.sessionID;
  await gov.ensureSeen(id);
  const last = gov.peek(id)?.compactionHistory.at(-1);
  if (last && gov.clock.now() - last.at < RECENT_MS) {
    if (last.trigger === "summarize") {
      await gov.update(id, (r) => (r ? { ...r, compactionHistory: [...r.compactionHistory.slice(0, -1), { ...last, trigger: "auto" }] } : r));
    }
    return;
  }
  gov.compactedByHook.add(id);
  await gov.apply(id, { type: "compacted", at: gov.clock.now(), trigger: "auto" });
}

/** A compaction entry this recent belongs to the compaction now finishing. */
const RECENT_MS = 30_000;
