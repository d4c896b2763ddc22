import { cleanLine } from "../text-safety/untrusted-text.ts";

/**
 * The one-line summary of a tool call that the session record keeps (`lastToolCall.summary`) and that reaches the
 * CLI, the dashboard, the parent's notification and resume contexts. Made clean at the source: terminal controls and
 * invisible characters removed, and token-like secrets redacted BEFORE the 120-character clip (so a cut can never
 * leave half a token unrecognized). A `task` call is summarized by its target agent or description; other tools by
 * their command, file path, pattern or description. Both hosts' argument names: OpenCode 1's `subagent_type` and
 * `filePath`, OpenCode 2's `agent` and `path` (2.0.15's `read`/`write`/`edit`; with `filePath` only, every OpenCode 2
 * file call was summarized as "" in records, resume contexts and parent notes).
 */
export function toolCallSummary(tool: string, args: Record<string, unknown> | undefined | null): string {
  if (!args || typeof args !== "object") return "";
  const pick =
    tool === "task" ? (args.subagent_type ?? args.agent ?? args.description) : (args.command ?? args.filePath ?? args.path ?? args.pattern ?? args.description);
  if (pick === undefined || pick === null) return "";
  return cleanLine(String(typeof pick === "object" ? JSON.stringify(pick) : pick).slice(0, 4_000), 120);
}

/**
 * One entry of a session's recent actions (the post-compaction reminder's and the compaction context's "last
 * actions", S2-R03): every tool call, from its already clean and redacted summary — a delegation reads "delegated to
 * <agent>", anything else "<tool> <what>" (e.g. "bash npm test", "edit src/app.ts").
 */
export function recentAction(tool: string, summary: string): string {
  const what = summary.trim();
  if (tool === "task") return `delegated to ${what || "a subagent"}`.slice(0, 200);
  return (what ? `${tool} ${what}` : tool).slice(0, 200);
}
