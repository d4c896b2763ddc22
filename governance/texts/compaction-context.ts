import type { Anchor } from "../config/config.ts";
import type { AgentView } from "../delegation/agent-view.ts";
import { importantAnchors } from "./post-compact-reminder.ts";
import { agentToken, hierarchyRule, languageText, plainLine, ROLE_LABEL } from "../text-safety/text-parts.ts";

export interface CompactionContextInput {
  language: { communication: string; documents: string };
  phase: string;
  /** All anchors; every priority is kept (compaction happens rarely, so the bytes are cheap here). */
  anchors: readonly Anchor[];
  /** Governance-relevant actions, oldest first; the last 3 are kept. */
  recentActions: readonly string[];
  /** Who the agent is: the same view the prefix states ({@link agentView}). */
  who: AgentView;
}

/**
 * Lines for `experimental.session.compacting` → `output.context` (each entry one line). The first line tells the
 * summarizer to carry the rest over verbatim, so language, hierarchy and anchors survive compaction (S2-R02) even
 * before the post-compact reminder is added on the next step.
 */
export function buildCompactionContext(input: CompactionContextInput): string[] {
  const critical = importantAnchors(input.anchors);
  const normal = input.anchors.filter((a) => a.priority === "normal");
  const lines = [
    "opencode-governance: copy the following lines VERBATIM into the summary; the agent must keep obeying them.",
    `Language: ${languageText(input.language)}. MUST MAINTAIN.`,
    `Agent: ${agentToken(input.who.agent)}, ${ROLE_LABEL[input.who.role]} (level ${input.who.level}). ${hierarchyRule(input.who)}`,
    `Phase: ${plainLine(input.phase, 60)}`,
  ];
  for (const anchor of [...critical, ...normal]) {
    lines.push(`Anchor [${plainLine(anchor.id, 40)}] (${anchor.priority}): ${plainLine(anchor.text, 300)}`);
  }
  const actions = input.recentActions.slice(-3);
  actions.forEach((action, i) => lines.push(`Recent action ${i + 1} of ${actions.length}: ${plainLine(action, 160)}`));
  return lines;
}
