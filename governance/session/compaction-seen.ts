import type { SessionRecord } from "./session-record.ts";

/** A compaction entry this recent belongs to the compaction now finishing. */
export const SAME_COMPACTION_MS = 30_000;

/**
 * One compaction, counted once. OpenCode's own compaction reaches the plugin twice: its autocontinue hook (`auto`,
 * recorded first so the synthetic "continue" step already carries the reminder) and then `session.compacted`
 * (`summarize`). Returns the record to keep when `ev` repeats the compaction the last entry already counts (an
 * entry first recorded as `summarize` is corrected to `auto`), or undefined when `ev` is a new compaction.
 */
export function compactionSeen(record: SessionRecord, ev: { at: number; trigger: "summarize" | "auto" }): SessionRecord | undefined {
  const last = record.compactionHistory.at(-1);
  if (!last || ev.at - last.at >= SAME_COMPACTION_MS) return undefined;
  if (ev.trigger === "summarize") return last.trigger === "auto" ? record : undefined;
  if (last.trigger !== "summarize") return record;
  return { ...record, compactionHistory: [...record.compactionHistory.slice(0, -1), { ...last, trigger: "auto" }] };
}
