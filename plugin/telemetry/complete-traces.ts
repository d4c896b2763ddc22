import type { Context } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** Spans held per trace until its root ends, and traces held at once; beyond either, spans are dropped (counted). */
export const MAX_SPANS_PER_TRACE = 1_000;
export const MAX_OPEN_TRACES = 200;
/** Traces whose root was exported, remembered so their late children go straight out. */
const FLUSHED_REMEMBERED = 1_000;

/**
 * Holds every span of a trace until its root span ends, then hands them all on (root included). A backend thus
 * never receives a child whose parent it will not receive: if the process dies mid-turn, the whole unfinished trace
 * is lost rather than exported as a dangling subtree. Children ending after their root (a background subagent, the
 * aborted children of an Escape, ~25 ms late) go straight out: their parent is already exported.
 */
export class CompleteTraces implements SpanProcessor {
  readonly #held = new Map<string, ReadableSpan[]>();
  readonly #flushed = new Set<string>();
  dropped = 0;

  constructor(readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const traceId = span.spanContext().traceId;
    if (!span.parentSpanContext || this.#flushed.has(traceId)) {
      for (const held of this.#held.get(traceId) ?? []) this.next.onEnd(held);
      this.#held.delete(traceId);
      this.next.onEnd(span);
      if (!span.parentSpanContext) this.#remember(traceId);
      return;
    }
    let spans = this.#held.get(traceId);
    if (!spans) {
      if (this.#held.size >= MAX_OPEN_TRACES) {
        this.dropped++;
        return;
      }
      spans = [];
      this.#held.set(traceId, spans);
    }
    if (spans.length >= MAX_SPANS_PER_TRACE) this.dropped++;
    else spans.push(span);
  }

  #remember(traceId: string): void {
    this.#flushed.add(traceId);
    if (this.#flushed.size > FLUSHED_REMEMBERED) this.#flushed.delete(this.#flushed.values().next().value as string);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    this.#held.clear();
    return this.next.shutdown();
  }
}
