import type { AgentRole } from "../config/config-schema.ts";
import type { FirstAction, SessionRecord } from "./session-record.ts";

/** Tools that change files (OpenCode 1 and 2 names). */
const FILE_CHANGING = new Set(["edit", "write", "patch", "multiedit", "apply_patch"]);
/** A primary's first call that reads the work or the governance state, or hands work over. */
const COORDINATING = new Set(["todoread", "todowrite", "task", "subagent", "governance"]);

/**
 * Seed 003 S1 "First Action Required", as a check of the session's first tool call against its role — the same
 * actions the governance prefix asks for (`defaultFirstActions` in texts/governance-prefix.ts):
 * - primary: update the todo list, read the governance state, or delegate (`todowrite`, `task`, `governance`; `todoread`
 *   of older OpenCode releases counts too);
 *   anything else — an edit, a shell command, even a file read — is a coordinator acting before it looked at the work;
 * - leaf: read before editing — a first call that changes a file is the miss (a shell command or a read is fine);
 * - delegating: its first action ("state your scope; plan or delegate") is not a tool, so every first call passes.
 * Pure; tool names are the host's (the OpenCode 2 adapter passes `subagent` for `task`).
 */
export function firstActionCheck(role: AgentRole, tool: string, at: number): FirstAction {
  const ok = role === "primary" ? COORDINATING.has(tool) : role === "leaf" ? !FILE_CHANGING.has(tool) : true;
  return { at, tool: tool.slice(0, 100), role, ok };
}

/**
 * The missed first action, while the model should still hear about it: from the miss until the turn it happened in
 * ends (the session's next `idle`). Undefined when the first action was right, not checked yet, or the turn is over.
 */
export function firstActionDue(r: SessionRecord): FirstAction | undefined {
  const f = r.firstAction;
  return f && !f.ok && (r.idleAt === null || r.idleAt < f.at) ? f : undefined;
}
