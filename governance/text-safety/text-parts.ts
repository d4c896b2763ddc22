import type { AgentRole } from "../config/config.ts";
import { detectDirective } from "./directive-detector.ts";
import { clip, flagLine, plainLine, untrustedBlock } from "./untrusted-text.ts";

/**
 * Small building blocks shared by the text builders. They exist so that every value that did not come from this
 * codebase (agent names from tool arguments, tool-call summaries, user reasons, injected guidance) reaches the model
 * in exactly one of two shapes: a clipped, single-line quoted value, or a fenced block labelled as data.
 */

/**
 * The two single-line shapes live in untrusted-text.ts under one name each: `plainLine` (config values, our own
 * records) and `untrustedLine` (anything else, quoted). They are re-exported here so the builders import one module.
 */
export { clip, plainLine, untrustedLine } from "./untrusted-text.ts";

/**
 * An agent name as a bare token. Names come from config, OpenCode, or a model's `task` arguments; anything outside
 * letters, digits and `_ . : @ / - *` is replaced so a name can never carry an instruction or break a line, and a
 * name that still reads as one ("system:") is flagged.
 */
export function agentToken(name: string | null | undefined): string {
  if (!name) return "(unknown agent)";
  const token = clip(name.replace(/[^\p{L}\p{N}_.:@/*-]/gu, "?"), 60);
  const kind = detectDirective(token);
  return kind ? flagLine(token, kind) : token;
}

/** A session id as a bare token (same rule as {@link agentToken}). */
export function sessionToken(id: string): string {
  return clip(String(id ?? "").replace(/[^A-Za-z0-9_-]/g, "?"), 70);
}

/**
 * Fences untrusted multi-line text as data: the one fence of {@link untrustedBlock} (a per-block nonce the content
 * cannot contain), with directive-like lines marked. `label` is a fixed phrase of ours.
 */
export function fence(text: string, label = "text"): string {
  return untrustedBlock(text, label);
}

export const ROLE_LABEL: Record<AgentRole, string> = { primary: "PRIMARY", delegating: "DELEGATING", leaf: "LEAF" };

/** "English" when both languages agree, else "English (communication), German (documents)". */
export function languageText(language: { communication: string; documents: string }): string {
  const c = plainLine(language.communication, 40);
  const d = plainLine(language.documents, 40);
  return c === d ? `${c} (communication and documents)` : `${c} (communication), ${d} (documents)`;
}

/** Reads an allow-list: "any agent", "none", "a, b", "any agent except x". Order-aware only for the common shapes. */
export function describeTargets(patterns: readonly string[]): string {
  if (patterns.length === 0) return "none";
  const allows = patterns.filter((p) => !p.startsWith("!")).map(agentToken);
  const denies = patterns.filter((p) => p.startsWith("!")).map((p) => agentToken(p.slice(1)));
  const allowText = allows.includes("*") ? "any agent" : allows.join(", ") || "none";
  return denies.length > 0 ? `${allowText} except ${denies.join(", ")}` : allowText;
}

/** One-line hierarchy reminder used by the prefix, the post-compact reminder and the compaction context. */
export function hierarchyRule(
  input: { role: AgentRole; depth?: number; maxDepth: number; mayDelegateTo?: readonly string[] },
  opts: { depthStated?: boolean; delegateTool?: string } = {},
): string {
  const atLimit = input.depth !== undefined && input.depth >= input.maxDepth;
  // The delegation tool as the host offers it (OpenCode 2: `subagent`); the core's `task` when the caller names none.
  const tool = opts.delegateTool ?? "task";
  if (input.role === "leaf") return `You are a LEAF agent: you cannot delegate (no \`${tool}\` calls); do the work yourself.`;
  if (atLimit) return `You are at the maximum delegation depth (${input.maxDepth}): do not delegate; do the work yourself.`;
  const lead = input.role === "primary" ? `NEVER edit files or do the work yourself; ALWAYS delegate with \`${tool}\`.` : "Delegate only within your scope.";
  // `depthStated`: the text already says "depth d of max n" (the prefix's You line); "any agent" is no limit to state.
  const any = input.mayDelegateTo?.length === 1 && input.mayDelegateTo[0] === "*";
  const targets = input.mayDelegateTo && !(opts.depthStated && any) ? ` Allowed targets: ${describeTargets(input.mayDelegateTo)}.` : "";
  return `${lead}${targets}${opts.depthStated ? "" : ` Max delegation depth: ${input.maxDepth}.`}`;
}
