/**
 * Which hosted sessions may have directives queued (filled by the queue watcher and by this process's own
 * requests), so a tool result of a session with nothing queued costs no file access.
 */
export class DirectiveInbox {
  readonly #marked = new Set<string>();

  mark(sessionId: string): void {
    this.#marked.add(sessionId);
  }

  has(sessionId: string): boolean {
    return this.#marked.has(sessionId);
  }

  /** True if the session was marked; the mark is cleared (the caller claims the queue now). */
  take(sessionId: string): boolean {
    return this.#marked.delete(sessionId);
  }
}
