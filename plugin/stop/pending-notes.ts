import type { PendingNote } from "../../governance/stop/parent-notes.ts";

/**
 * Per session, the parent notifications shown on model steps but not yet carried by a persisted tool result
 * (governance/stop/parent-notes.ts decides). In memory: an entry exists only while a note is owed, and is removed
 * when a tool result carries it, the turn that showed it ends, or the session's record is released.
 */
export class PendingNotes {
  readonly #notes = new Map<string, PendingNote[]>();

  get(sessionId: string): PendingNote[] {
    return this.#notes.get(sessionId) ?? [];
  }

  has(sessionId: string): boolean {
    return this.#notes.has(sessionId);
  }

  set(sessionId: string, notes: readonly PendingNote[]): void {
    if (notes.length === 0) this.#notes.delete(sessionId);
    else this.#notes.set(sessionId, [...notes]);
  }

  /** Sessions with a note owed (for tests and the bench's memory checks). */
  size(): number {
    return this.#notes.size;
  }
}
