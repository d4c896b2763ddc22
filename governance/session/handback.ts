import { clip } from "../text-safety/untrusted-text.ts";
import type { Step } from "./effects.ts";
import type { Handback, SessionRecord } from "./session-record.ts";

/** The longest answer a record keeps (its start: a summary comes first), and how many changed files. */
export const MAX_ANSWER = 1_500;
export const MAX_FILES = 20;
const MAX_PATH = 300;

const EMPTY: Handback = { answer: null, files: [] };

/**
 * A subagent finished a piece of answer text (OpenCode 1's `experimental.text.complete`, OpenCode 2's
 * `session.text.ended`): the last one is kept for its parent's note. A root's text is not kept — its reader is the
 * user, who saw it — and empty text changes nothing.
 */
export function noteAnswer(r: SessionRecord | undefined, text: string): Step {
  if (!r || r.parentId === null) return { next: r, effects: [] };
  const answer = clip(text.trim(), MAX_ANSWER);
  if (answer === "" || r.handback?.answer === answer) return { next: r, effects: [] };
  return { next: { ...r, handback: { ...(r.handback ?? EMPTY), answer } }, effects: [] };
}

/** The files a subagent's tool call writes, added to what it hands back: each once, newest last, the newest kept. */
export function noteFiles(r: SessionRecord, files: readonly string[]): SessionRecord {
  if (r.parentId === null || files.length === 0) return r;
  const before = r.handback ?? EMPTY;
  const added = files.map((f) => f.slice(0, MAX_PATH));
  const kept = [...before.files.filter((f) => !added.includes(f)), ...added].slice(-MAX_FILES);
  if (kept.length === before.files.length && kept.every((f, i) => f === before.files[i])) return r;
  return { ...r, handback: { ...before, files: kept } };
}
