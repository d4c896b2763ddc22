import { recentAction } from "./tool-call-summary.ts";
import type { SessionRecord } from "./session-record.ts";
import { noteFiles } from "./handback.ts";

/** The fields of a `tool_before` event that a record keeps. `files`: what the call writes (a file tool's targets). */
export type ToolCallEvent = { at: number; tool: string; callId: string; summary: string; files?: readonly string[] | undefined };

/**
 * What one tool call records (S3-R01..R06): the last tool call (summary capped at 200), the first tool, the counter,
 * and — S2-R03 — the session's last three actions, which the post-compaction reminder and the compaction context
 * recall: every tool call (issue 21 item 8), not only delegations.
 */
export function recordToolCall(r: SessionRecord, ev: ToolCallEvent, lastActivityAt: number): SessionRecord {
  return noteFiles(
    {
      ...r,
      lastActivityAt,
      lastToolCall: { tool: ev.tool, callId: ev.callId, at: ev.at, summary: ev.summary.slice(0, 200) },
      firstTool: r.firstTool ?? ev.tool,
      counters: { ...r.counters, toolCalls: r.counters.toolCalls + 1 },
      recentActions: [...r.recentActions, recentAction(ev.tool, ev.summary)].slice(-3),
    },
    ev.files ?? [],
  );
}
