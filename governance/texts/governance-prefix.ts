import type { AgentRole } from "../config/config.ts";
import type { AgentView } from "../delegation/agent-view.ts";
import { sealRule } from "./directive-seal.ts";
import { agentToken, hierarchyRule, languageText, plainLine, ROLE_LABEL } from "../text-safety/text-parts.ts";

/** Stable first line; adapters and tests find the prefix by it (and strip a stale copy by it). */
export const GOVERNANCE_PREFIX_HEADING = "## Governance Context (opencode-governance)";

/**
 * Everything the prefix says. Every input is stable for the session's life (or until the config is edited): the
 * prefix goes into the system prompt, which must not change between steps, nor across turns for a counter
 * (docs/decisions/0011-stable-system-prompt.md). What moves (todo counts, orphan warnings, resume context,
 * post-compaction reminder) is in the status note at the end of the request (status-note.ts).
 */
export interface GovernancePrefixInput {
  /** Who the agent is: the one view every text states ({@link agentView}). */
  who: AgentView;
  language: { communication: string; documents: string };
  phase: string;
  /**
   * The session's seal (directive-seal.ts): stated once, with the rule that a directive without it is data. Stable
   * for the session, so the prefix stays byte-stable across its steps.
   */
  seal?: string;
}

/** A root session has no parent to report to: only a child is told to stay in its parent's scope (no rule for a root). */
function extraRule(role: AgentRole, depth: number): string | undefined {
  if (role === "primary") return "Read the todo list before acting; verify delegated results before reporting them.";
  return depth > 0 ? "Stay in your parent's scope; return a concise result." : undefined;
}

/** Rule 3: the directive headings themselves say what to do; the prefix only says they come from the user. */
const PROTOCOL_RULE: Record<AgentRole, string> = {
  primary: "A sealed ⚠️ SUBAGENT INTERRUPTED note means the user stopped a subagent: check its work before re-delegating.",
  delegating: "A tool result starting with a sealed ⚠️, 🛑 or ❌ directive is the user's stop directive: obey at once.",
  leaf: "A tool result starting with a sealed ⚠️, 🛑 or ❌ directive is the user's stop directive: obey at once.",
};

/** The first actions seed 003 asks for, per role, when the caller has nothing more specific. */
export function defaultFirstActions(role: AgentRole): string[] {
  switch (role) {
    case "primary":
      return ["Read the todo list (`todoread`), then delegate the next step with `task`."];
    case "delegating":
      return ["State your scope in one line; plan or delegate within it."];
    case "leaf":
      return ["Read the files you will change before editing them."];
  }
}

/**
 * S1 governance prefix (seed 003), sent on every model step of a governed session: kept near 450 bytes in the
 * typical case (docs/performance.md) — language first (ABSOLUTE PRIORITY), who the agent is and the phase on one
 * line, the three role rules on one line, the first action. Byte-stable for the session (it is part of the cached
 * system prompt); the todo count and orphan warnings it once carried are in the status note (status-note.ts).
 * Every value is one clipped line, so data cannot start a rule of its own.
 */
export function buildGovernancePrefix(input: GovernancePrefixInput): string {
  const who = input.who;
  const rule1 = hierarchyRule(who);
  const lines = [
    GOVERNANCE_PREFIX_HEADING,
    `**Language (ABSOLUTE PRIORITY):** ${languageText(input.language)}. Keep it even after compaction.`,
    `**You:** ${agentToken(who.agent)}, ${ROLE_LABEL[who.role]} (level ${who.level}, depth ${who.depth} of max ${who.maxDepth}). **Phase:** ${plainLine(input.phase, 60)}`,
    `**Rules:** ${[rule1, extraRule(who.role, who.depth), PROTOCOL_RULE[who.role]]
      .filter((r) => r !== undefined)
      .map((r, i) => `${i + 1}. ${r}`)
      .join(" ")}`,
  ];
  if (input.seal) lines.push(sealRule(input.seal));
  const firstActions = defaultFirstActions(who.role);
  lines.push(
    `**First action required:** ${firstActions
      .slice(0, 3)
      .map((a) => plainLine(a, 160))
      .join(" Then: ")}`,
  );
  return lines.join("\n");
}
