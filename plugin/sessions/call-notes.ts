/**
 * A note for the result of one tool call, from `tool.execute.before` to `tool.execute.after` of the same call
 * (e.g. the log-only delegation note). Taken once.
 */
export class CallNotes {
  readonly #notes = new Map<string, string>();

  /** A call whose `tool.execute.after` never comes (the tool failed) leaves its note: the oldest go past this many. */
  static readonly MAX = 256;

  set(callId: string, note: string): void {
    this.#notes.set(callId, note);
    for (const oldest of this.#notes.keys()) {
      if (this.#notes.size <= CallNotes.MAX) break;
      this.#notes.delete(oldest);
    }
  }

  size(): number {
    return this.#notes.size;
  }

  take(callId: string): string | undefined {
    const note = this.#notes.get(callId);
    this.#notes.delete(callId);
    return note;
  }
}
