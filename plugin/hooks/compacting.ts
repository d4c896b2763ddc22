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
