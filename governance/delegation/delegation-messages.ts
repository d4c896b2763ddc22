import { agentToken, describeTargets } from "../text-safety/text-parts.ts";
import { plainLine } from "../text-safety/untrusted-text.ts";

/**
 * Messages for a refused `task` spawn. The adapter throws them from `tool.execute.before`, so the model reads them
 * as the tool result and the user sees them in the transcript: each says what was blocked, why, and what to do
 * instead, and tells the model not to work around the block by spawning someone else.
 */

export const HALT_HEADING = "🚨 EMERGENCY_HALT: MAX_DELEGATION_DEPTH_EXCEEDED";
export const LEAF_BLOCKED_HEADING = "⛔ DELEGATION BLOCKED: LEAF_AGENT";
export const NOT_ALLOWED_HEADING = "⛔ DELEGATION BLOCKED: TARGET_NOT_ALLOWED";
export const NOT_OWN_SUBAGENT_HEADING = "⛔ DELEGATION BLOCKED: NOT_YOUR_SUBAGENT";
export const STOPPED_SUBAGENT_HEADING = "⛔ DELEGATION BLOCKED: SUBAGENT_STOPPED";
export const NOT_NAMED_HEADING = "⛔ DELEGATION BLOCKED: AGENT_NOT_NAMED";

/** Where a refused agent hands its work back: a root session has no parent, only the user who started it. */
function handBack(callerDepth: number, what: "have" | "could not"): string {
  const said = what === "have" ? "what you have and what remains undone" : "what you could not do";
  return callerDepth === 0 ? `tell the user ${said}` : `return to your parent with ${said}`;
}

export interface HaltMessageInput {
  callerAgent: string | null;
  callerDepth: number;
  targetAgent: string;
  maxDepth: number;
}

export function buildHaltMessage(input: HaltMessageInput): string {
  return [
    HALT_HEADING,
    `opencode-governance blocked this delegation: ${agentToken(input.callerAgent)} (depth ${input.callerDepth}) tried to spawn ${agentToken(input.targetAgent)} at depth ${input.callerDepth + 1}; the maximum is ${input.maxDepth}.`,
    `Do not retry or spawn another agent instead. Finish the work yourself, or ${handBack(input.callerDepth, "have")}.`,
  ].join("\n");
}

export interface LeafBlockedMessageInput {
  callerAgent: string | null;
  /** The caller session's depth: 0 for a root session, which has no parent to return to. */
  callerDepth: number;
  targetAgent: string;
}

export function buildLeafBlockedMessage(input: LeafBlockedMessageInput): string {
  return [
    LEAF_BLOCKED_HEADING,
    `${agentToken(input.callerAgent)} is a leaf agent and cannot delegate (it tried to spawn ${agentToken(input.targetAgent)}).`,
    `Do the work yourself with your own tools, or ${handBack(input.callerDepth, "could not")}.`,
  ].join("\n");
}

export interface NotAllowedMessageInput {
  callerAgent: string | null;
  callerDepth: number;
  targetAgent: string;
  /** The caller's `mayDelegateTo` patterns. */
  allowed: readonly string[];
}

export function buildNotAllowedMessage(input: NotAllowedMessageInput): string {
  const targets = describeTargets(input.allowed);
  return [
    NOT_ALLOWED_HEADING,
    `${agentToken(input.callerAgent)} may not delegate to ${agentToken(input.targetAgent)}. Allowed targets: ${targets}.`,
    targets === "none" ? `Do the work yourself, or ${handBack(input.callerDepth, "could not")}.` : "Delegate to an allowed agent, or do the work yourself.",
  ].join("\n");
}

export interface NotNamedMessageInput {
  callerAgent: string;
  callerDepth: number;
  targetAgent: string;
  /** The config file as the user knows it (`.opencode/governance.yaml`). */
  configFile: string;
  /** The lines to add under `agents:` (project-agents.ts `suggestedEntry`), indented as they go in the file. */
  add: readonly string[];
}

/**
 * The refusal of an agent the config does not name (it falls to `defaultRole`, a leaf): in the user's terms — the
 * file, and the exact lines that would let it delegate — because only the user can make that change. Each line keeps
 * its indentation; its text is one clean line (a name or glob from a cloned repository is data, never a rule).
 */
export function notNamedSentence(input: Pick<NotNamedMessageInput, "callerAgent" | "configFile">): string {
  return `\`${agentToken(input.callerAgent)}\` is not named in ${input.configFile}, so it may not delegate; to let it, add:`;
}

export function entryLines(add: readonly string[]): string[] {
  return add.map((line) => {
    const indent = /^ */.exec(line)?.[0] ?? "";
    return `${indent}${plainLine(line.slice(indent.length), 200)}`;
  });
}

export function buildNotNamedMessage(input: NotNamedMessageInput): string {
  return [
    NOT_NAMED_HEADING,
    notNamedSentence(input),
    ...entryLines(input.add),
    `(under \`agents:\`; it tried to spawn ${agentToken(input.targetAgent)}). Only the user can change that file: do not retry or spawn another agent instead; do the work yourself with your own tools, or ${handBack(input.callerDepth, "could not")}.`,
  ].join("\n");
}

export interface ContinuationInput {
  callerAgent: string | null;
  /** The `task_id` the model gave: checked to be a session id before it gets here. */
  sessionId: string;
}

export function buildNotOwnSubagentMessage(input: ContinuationInput): string {
  return [
    NOT_OWN_SUBAGENT_HEADING,
    `${agentToken(input.callerAgent)} may continue only its own subagents; task_id ${input.sessionId} is not one of them.`,
    "Use a task_id from one of your own task results, or start a new task without task_id.",
  ].join("\n");
}

export function buildStoppedSubagentMessage(input: ContinuationInput): string {
  return [
    STOPPED_SUBAGENT_HEADING,
    `Subagent ${input.sessionId} was stopped (by the user or governance); a stop is final, so ${agentToken(input.callerAgent)} may not continue it.`,
    "Do not retry. Report what it finished and what remains; start a new task only if your instructions still call for it.",
  ].join("\n");
}

export interface LogOnlyNoteInput {
  kind: "leaf" | "not_named" | "not_allowed" | "max_depth" | "not_own_subagent" | "stopped_subagent";
  callerAgent: string | null;
  targetAgent: string;
}

const KIND_TEXT: Record<LogOnlyNoteInput["kind"], string> = {
  leaf: "the caller is a leaf agent",
  not_named: "the caller is not named in governance.yaml",
  not_allowed: "the target is not in the caller's allowed list",
  max_depth: "it exceeds the maximum delegation depth",
  not_own_subagent: "its task_id names a session that is not the caller's subagent",
  stopped_subagent: "its task_id names a subagent a stop ended",
};

/** One line for log-only mode: the spawn goes ahead, but the model and the audit trail learn it broke the policy. */
export function buildLogOnlyNote(input: LogOnlyNoteInput): string {
  return `(opencode-governance, log-only: ${agentToken(input.callerAgent)} → ${agentToken(input.targetAgent)} would be blocked in enforce mode: ${KIND_TEXT[input.kind]}. Allowed and logged.)`;
}
