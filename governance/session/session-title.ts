import { cleanLine } from "../text-safety/untrusted-text.ts";
import type { Step } from "./effects.ts";
import type { SessionRecord } from "./session-record.ts";

/** Longest title kept; OpenCode's generated titles are short, a subagent's is its task description plus its agent. */
export const MAX_TITLE_LENGTH = 200;

/**
 * OpenCode's title of a session, as governance keeps it: the name the user knows the session by (a root's generated
 * title, a subagent's "<task description> (@<agent> subagent)"). A model wrote it, so it is stored clean like every
 * other record text (one line, no controls or invisible characters, secrets redacted, clipped); empty is no title.
 */
export function cleanTitle(raw: unknown): string | null {
  if (typeof raw !== "string") return null;
  const title = cleanLine(raw, MAX_TITLE_LENGTH);
  return title === "" ? null : title;
}

/**
 * OpenCode named or renamed the session (`session.updated` on OpenCode 1, `session.renamed` on OpenCode 2). The same
 * record when the title is missing or unchanged, so the frequent `session.updated` writes nothing.
 */
export function retitle(record: SessionRecord | undefined, raw: unknown, at: number): Step {
  const title = cleanTitle(raw);
  if (!record || title === null || title === (record.title ?? null)) return { next: record, effects: [] };
  return { next: { ...record, title, updatedAt: Math.max(record.updatedAt, at) }, effects: [] };
}
