import type { AgentRole } from "../config/config.ts";
import type { AgentView } from "../delegation/agent-view.ts";
import { CORE_TEXT_TOOLS, type TextTools } from "../host/host-lines.ts";
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
  /** The tools the texts name, as the host offers them (OpenCode 1's when absent). */
  tools?: TextTools;
}

/** A root session has no parent to report to: only a child is told to stay in its parent's scope (no rule for a root). */
function extraRule(role: AgentRole, depth: number): string | undefined {
  if (role === "primary") return "Read the todo list before acting; verify delegated results before reporting them.";
  return depth > 0 ? "Stay in your parent's scope; return a concise result." : undefined;
}

/**
 * The stop protocol when no seal is stated (a caller without a key); with a seal, {@link sealRule} says it all — obey
 * a sealed stop at once, nothing unsealed — and a primary keeps its own rule about the interrupted-subagent note.
 */
const PROTOCOL_RULE: Record<AgentRole, string> = {
  primary: "A sealed ⚠️ SUBAGENT STOPPED note means the user stopped a subagent: check its work before re-delegating.",
  delegating: "A tool result starting with a sealed ⚠️, 🛑 or ❌ directive is the user's stop directive: obey at once.",
  leaf: "A tool result starting with a sealed ⚠️, 🛑 or ❌ directive is the user's stop directive: obey at once.",
};

/** The first actions seed 003 asks for, per role, when the caller has nothing more specific. */
export function defaultFirstActions(role: AgentRole, tools: TextTools = CORE_TEXT_TOOLS): string[] {
  switch (role) {
    case "primary":
      // OpenCode 1.18 offers `todowrite` and no `todoread` (its result and the status note show the list); 2.0.15 offers
      // `subagent` and no todo tool: a text names only tools the agent is offered (test/e2e/project-agents.test.ts
      // checks the prefix against the request's tools on 1.18, test/e2e/opencode-2-host.test.ts on 2.0.15).
      return tools.todo
        ? [`Update the todo list (\`${tools.todo}\`), then delegate the next step with \`${tools.delegate}\`.`]
        : [`Delegate the next step with \`${tools.delegate}\`.`];
    case "delegating":
      return ["State your scope in one line."];
    case "leaf":
      return ["Read the files you will change before editing them."];
  }
}

/**
 * S1 governance prefix (seed 003), sent on every model step of a governed session. With the governance tool's schema
 * it must stay within 1 024 bytes per request for OpenCode's `build` agent (issue 31; test/governance/texts/
 * request-budget.test.ts and the end-to-end measurement in test/e2e/governance-prefix.test.ts): language first
 * (ABSOLUTE PRIORITY, kept after compaction), who the agent is — role, level, depth and its limit — and the phase on
 * one line, the role's rules on one line (the hierarchy rule, a parent's scope for a child, the sealed-directive rule),
 * the first action. Byte-stable for the session (it is part of the cached system prompt); the todo count and orphan
 * warnings it once carried are in the status note (status-note.ts). Every value is one clipped line, so data cannot
 * start a rule of its own.
 */
export function buildGovernancePrefix(input: GovernancePrefixInput): string {
  const who = input.who;
  // The You line states the depth limit: the rule does not repeat it.
  const tools = input.tools ?? CORE_TEXT_TOOLS;
  const rule1 = hierarchyRule(who, { depthStated: true, delegateTool: tools.delegate });
  const rules = [rule1, extraRule(who.role, who.depth), input.seal ? sealRule(input.seal) : undefined];
  if (!input.seal || who.role === "primary") rules.push(PROTOCOL_RULE[who.role]);
  const firstActions = defaultFirstActions(who.role, tools);
  return [
    GOVERNANCE_PREFIX_HEADING,
    `**Language (ABSOLUTE PRIORITY):** ${languageText(input.language)}, even after compaction.`,
    `**You:** ${agentToken(who.agent)}, ${ROLE_LABEL[who.role]} (level ${who.level}, depth ${who.depth} of max ${who.maxDepth}). **Phase:** ${plainLine(input.phase, 60)}`,
    `**Rules:** ${rules
      .filter((r) => r !== undefined)
      .map((r, i) => `${i + 1}. ${r}`)
      .join(" ")}`,
    `**First action required:** ${firstActions
      .slice(0, 3)
      .map((a) => plainLine(a, 160))
      .join(" Then: ")}`,
  ].join("\n");
}
