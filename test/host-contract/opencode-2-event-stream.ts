import type { V2Event } from "../../plugin/opencode-2/types.ts";

/**
 * OpenCode 2's global event stream as the double serves it: `event.subscribe()` is ONE stream every plugin instance
 * sees (one instance per location), each subscriber reading its own queue in order. The double publishes the events
 * it replays from the captures here (opencode-2-double.ts) and waits on `allIdle` to know every instance handled them.
 */
export class EventStream {
  #subscribers = new Set<(e: V2Event) => void>();
  /** Per subscriber: true while it waits in `next()` with nothing queued (it handled everything it got). */
  #idle = new Map<(e: V2Event) => void, () => boolean>();

  /** Open subscriptions (one per live plugin runtime reading the stream). */
  get size(): number {
    return this.#subscribers.size;
  }

  publish(e: V2Event): void {
    for (const s of this.#subscribers) s(e);
  }

  /** Every subscriber waits for its next event with nothing queued. */
  allIdle(): boolean {
    return [...this.#idle.values()].every((idle) => idle());
  }

  /** What `ctx.event.subscribe()` returns: an async iterable whose `return()` ends the subscription. */
  subscribe(): AsyncIterable<V2Event> {
    const subscribers = this.#subscribers;
    const idleOf = this.#idle;
    const queue: V2Event[] = [];
    let wake: (() => void) | undefined;
    let closed = false;
    const push = (e: V2Event) => {
      queue.push(e);
      wake?.();
    };
    subscribers.add(push);
    let waiting = false;
    idleOf.set(push, () => waiting && queue.length === 0);
    return {
      [Symbol.asyncIterator]: () => ({
        async next(): Promise<IteratorResult<V2Event>> {
          waiting = true;
          while (queue.length === 0 && !closed) await new Promise<void>((r) => (wake = r));
          waiting = false;
          if (closed) return { done: true, value: undefined };
          return { done: false, value: queue.shift() as V2Event };
        },
        async return(): Promise<IteratorResult<V2Event>> {
          closed = true;
          subscribers.delete(push);
          idleOf.delete(push);
          wake?.();
          return { done: true, value: undefined };
        },
      }),
    };
  }
}
