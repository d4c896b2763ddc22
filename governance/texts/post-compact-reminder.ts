import type { Anchor } from "../config/config.ts";
import type { AgentView } from "../delegation/agent-view.ts";
import { agentToken, hierarchyRule, languageText, plainLine, ROLE_LABEL } from "../text-safety/text-parts.ts";

export const POST_COMPACT_HEADING = "## Post-Compaction Context Recovery (opencode-governance)";

export interface PostCompactReminderInput {
  language: { communication: string; documents: string };
  phase: string;
  /** Governance-relevant actions, oldest first; only the last 3 are shown (S2-R03). */
  recentActions: readonly string[];
  /** All anchors; only critical and high ones are shown (S2-R04), critical first. */
  anchors: readonly Anchor[];
  /** Who the agent is: the same view the prefix states ({@link agentView}). */
  who: AgentView;
}

/** Critical and high anchors, critical first, order otherwise kept. Shared with the compaction context. */
export function importantAnchors(anchors: readonly Anchor[]): Anchor[] {
  return [...anchors.filter((a) => a.priority === "critical"), ...anchors.filter((a) => a.priority === "high")];
}

/** `- [ANCHOR-001] (critical) text` */
export function anchorLine(anchor: Anchor): string {
  return `- [${plainLine(anchor.id, 40)}] (${anchor.priority}) ${plainLine(anchor.text, 300)}`;
}

/**
 * S2 reminder shown after OpenCode compacted the session (S2-R01..R06): language as MUST MAINTAIN, phase, who the
 * agent is and its hierarchy rule, the last three actions, critical/high anchors, and recommended next steps.
 * Sections with no content are left out rather than printed empty, since every byte is re-sent on each step.
 */
export function buildPostCompactReminder(input: PostCompactReminderInput): string {
  const lines = [
    POST_COMPACT_HEADING,
    `**Language:** ${languageText(input.language)}. MUST MAINTAIN.`,
    `**Phase:** ${plainLine(input.phase, 60)}`,
    `**You:** ${agentToken(input.who.agent)}, ${ROLE_LABEL[input.who.role]} (level ${input.who.level}). ${hierarchyRule(input.who)}`,
  ];
  const actions = input.recentActions.slice(-3);
  if (actions.length > 0) {
    lines.push(`**Last ${actions.length} action${actions.length === 1 ? "" : "s"}:**`);
    actions.forEach((action, i) => lines.push(`${i + 1}. ${plainLine(action, 160)}`));
  }
  const anchors = importantAnchors(input.anchors);
  if (anchors.length > 0) {
    lines.push("**Critical anchors:**");
    for (const anchor of anchors) lines.push(anchorLine(anchor));
  }
  lines.push(
    "**Recommended next:**",
    input.who.role === "primary" ? "- Check what the todo list still has open before delegating again." : "- Re-read the task your parent gave you.",
    "- Verify the last action completed before starting new work.",
  );
  return lines.join("\n");
}
