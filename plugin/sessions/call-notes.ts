/**
 * A note for the result of one tool call, from `tool.execute.before` to `tool.execute.after` of the same call
 * (e.g. the log-only delegation note). Taken once.
 */
export class CallNotes {
  readonly #notes = new Map<string, string>();

  set(callId: string, note: string): void {
    this.#notes.set(callId, note);
  }

  take(callId: string): string | undefined {
    const note = this.#notes.get(callId);
    this.#notes.delete(callId);
    return note;
  }
}
