import type { StopDirective } from "../../governance/stop/directive-queue.ts";

/**
 * The stop requests of each session already handed to the ladder (`StopController.begin`). A request is seen by a
 * queue look and again when a tool result claims it (directive-delivery.ts): it is begun once. In memory, per
 * session, forgotten when the stop is final or the session ends.
 */
export class BegunRequests {
  readonly #ids = new Map<string, Set<string>>();

  /** Notes the requests as begun; returns those seen for the first time. */
  note(sessionId: string, stops: readonly StopDirective[]): StopDirective[] {
    if (stops.length === 0) return [];
    const ids = this.#ids.get(sessionId) ?? new Set<string>();
    const fresh = stops.filter((d) => !ids.has(d.id));
    for (const d of stops) ids.add(d.id);
    this.#ids.set(sessionId, ids);
    return fresh;
  }

  /** Of `stops`, those not begun yet for this session. */
  unbegun(sessionId: string, stops: readonly StopDirective[]): StopDirective[] {
    const ids = this.#ids.get(sessionId);
    return ids ? stops.filter((d) => !ids.has(d.id)) : [...stops];
  }

  forget(sessionId: string): void {
    this.#ids.delete(sessionId);
  }

  get size(): number {
    return this.#ids.size;
  }
}
