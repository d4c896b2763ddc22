import { type Attributes, type Context, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { auditAttributes, TELEMETRY_MAP } from "../../governance/telemetry/telemetry-map.ts";
import type { HostSignal } from "./host-signals.ts";
import { SessionFacts, type Turn } from "./session-facts.ts";

/**
 * A finished turn stays open while governance still handles events of its session: OpenCode reports the session
 * idle at once, and calls the plugin's `event` hook without waiting, so the plugin's own handling of the same moment
 * (an Escape's `session_aborted`, a stop's completion) is audited later. The span closes TURN_CLOSE_GRACE_MS after
 * the last of them is handled, or TURN_CLOSE_MAX_WAIT_MS after the idle at the latest; its end time is still the
 * moment OpenCode reported.
 */
export const TURN_CLOSE_GRACE_MS = 100;
export const TURN_CLOSE_MAX_WAIT_MS = 5_000;

export type TurnSpansOptions = {
  tracer: Tracer;
  /** The governance role of an agent (primary / delegating / leaf) from the live config. */
  roleOf: (agent: string | undefined) => string;
  toolSpans: boolean;
  /** Free text in span event attributes (the user's opt-in, telemetry-map.ts FREE_TEXT_KEYS). */
  includeText?: boolean;
  now: () => number;
};

/**
 * One `invoke_agent {agent}` span (INTERNAL, GenAI semantic conventions) per turn of each session: opened when
 * OpenCode reports the session busy, ended when it reports it idle (or on dispose). A subagent's turn is a child of
 * the turn of its parent that spawned it (the parent is known from `session.created`'s parentID, and its turn is
 * open while its `task` runs), so one trace = one turn of a root session = one user prompt with its whole
 * delegation tree. Governance decisions (audit events, TELEMETRY_MAP) become events on the session's open turn.
 */
export class TurnSpans {
  readonly #facts = new SessionFacts();
  readonly #o: TurnSpansOptions;

  constructor(options: TurnSpansOptions) {
    this.#o = options;
  }

  /** Sessions by state and depth (the `governance.sessions` gauge). */
  census(): Map<string, { state: string; depth: number; count: number }> {
    return this.#facts.census();
  }

  /** The context of a session's open turn (log records and tool spans join it), or undefined. */
  contextOf(sessionId: string | undefined): Context | undefined {
    const turn = sessionId ? this.#facts.get(sessionId)?.turn : undefined;
    return turn ? trace.setSpan(ROOT_CONTEXT, turn.span) : undefined;
  }

  signal(sig: HostSignal): void {
    switch (sig.type) {
      case "created": {
        const s = this.#facts.ensure(sig.sessionId);
        s.parentId = sig.parentId;
        return;
      }
      case "busy":
        this.#open(sig.sessionId);
        return;
      case "idle": {
        const turn = this.#facts.get(sig.sessionId)?.turn;
        if (!turn || turn.endAt !== undefined) return;
        turn.endAt = this.#o.now();
        this.#closeIn(sig.sessionId, turn, TURN_CLOSE_MAX_WAIT_MS);
        return;
      }
      case "error": {
        const turn = this.#facts.get(sig.sessionId)?.turn;
        if (!turn) return;
        if (sig.name === "MessageAbortedError") turn.interrupted = true;
        else turn.error = sig.name;
        return;
      }
      case "assistant": {
        const s = this.#facts.get(sig.sessionId);
        if (sig.agent && s && !s.agent) {
          s.agent = sig.agent;
          s.turn?.span.updateName(`invoke_agent ${sig.agent}`);
        }
        const turn = s?.turn;
        if (!turn) return;
        if (sig.provider) turn.provider = sig.provider;
        if (sig.model) turn.model = sig.model;
        if (sig.tokens) turn.tokens.set(sig.messageId, sig.tokens);
        return;
      }
      case "tool": {
        const ctx = this.#o.toolSpans ? this.contextOf(sig.sessionId) : undefined;
        if (!ctx) return;
        const span = this.#o.tracer.startSpan(
          `execute_tool ${sig.tool}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: sig.start || this.#o.now(),
            attributes: {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": sig.tool,
              "gen_ai.tool.call.id": sig.callId,
              "gen_ai.tool.type": "function",
              "gen_ai.conversation.id": sig.sessionId,
            },
          },
          ctx,
        );
        if (sig.status === "error") span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute("error.type", "tool_error");
        span.end(sig.end || this.#o.now());
        return;
      }
    }
  }

  #closeIn(id: string, turn: Turn, ms: number): void {
    clearTimeout(turn.closer);
    turn.closer = setTimeout(() => this.#close(id, "completed"), ms);
    turn.closer.unref?.();
  }

  /** The governance `event` hook began (`+1`) or finished (`-1`) handling an event of this session. */
  handling(sessionId: string, delta: 1 | -1): void {
    const s = delta === 1 ? this.#facts.ensure(sessionId) : this.#facts.get(sessionId);
    if (!s) return;
    s.inFlight = Math.max(0, s.inFlight + delta);
    if (delta === -1 && s.inFlight === 0 && s.turn?.endAt !== undefined) this.#closeIn(sessionId, s.turn, TURN_CLOSE_GRACE_MS);
  }

  #open(id: string): void {
    const s = this.#facts.ensure(id);
    if (s.turn?.endAt !== undefined) this.#close(id, "completed");
    if (s.turn) return;
    const parentCtx = s.parentId ? this.contextOf(s.parentId) : undefined;
    const span = this.#o.tracer.startSpan(
      s.agent ? `invoke_agent ${s.agent}` : "invoke_agent",
      {
        kind: SpanKind.INTERNAL,
        startTime: this.#o.now(),
        attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": id, ...(s.parentId ? { "governance.parent_id": s.parentId } : {}) },
      },
      parentCtx ?? ROOT_CONTEXT,
    );
    s.turn = { span, tokens: new Map(), interrupted: false };
  }

  #close(id: string, how: "completed" | "disposed"): void {
    const s = this.#facts.get(id);
    const turn = s?.turn;
    if (!s || !turn) return;
    s.turn = undefined;
    clearTimeout(turn.closer);
    const attrs: Attributes = {
      "governance.state": s.state,
      "governance.depth": this.#facts.depthOf(s),
      "governance.role": this.#o.roleOf(s.agent),
      "governance.turn.outcome": turn.interrupted ? "interrupted" : turn.error ? "error" : how,
    };
    if (s.agent) attrs["gen_ai.agent.name"] = s.agent;
    if (turn.provider) attrs["gen_ai.provider.name"] = turn.provider;
    if (turn.model) attrs["gen_ai.request.model"] = turn.model;
    if (turn.tokens.size > 0) {
      const sum = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
      for (const t of turn.tokens.values()) {
        sum.input += t.input;
        sum.output += t.output;
        sum.cacheRead += t.cacheRead;
        sum.cacheWrite += t.cacheWrite;
      }
      attrs["gen_ai.usage.input_tokens"] = sum.input;
      attrs["gen_ai.usage.output_tokens"] = sum.output;
      attrs["gen_ai.usage.cache_read.input_tokens"] = sum.cacheRead;
      attrs["gen_ai.usage.cache_creation.input_tokens"] = sum.cacheWrite;
    }
    if (turn.error) {
      attrs["error.type"] = turn.error;
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: turn.error });
    }
    turn.span.setAttributes(attrs);
    turn.span.end(turn.endAt ?? this.#o.now());
  }

  /** An audit event: session facts (depth, agent, state) and, per TELEMETRY_MAP, an event on the open turn. */
  audit(type: string, data: Record<string, unknown>): void {
    const id = typeof data.sessionId === "string" ? data.sessionId : undefined;
    if (!id) return;
    const s = this.#facts.learn(id, type, data);
    const mapping = TELEMETRY_MAP[type];
    if (s.turn && type === "session_stop_requested") s.turn.stopped = true;
    const event = s.turn?.stopped && mapping?.eventAfterStop ? mapping.eventAfterStop : mapping?.event;
    // A decision handled just after OpenCode ended the turn (within the grace) belongs to it, at its end.
    if (event && s.turn)
      s.turn.span.addEvent(event, auditAttributes(type, data, { includeText: this.#o.includeText }), Math.min(this.#o.now(), s.turn.endAt ?? Infinity));
  }

  /** Ends every open turn (plugin dispose, telemetry turned off): nothing is left unexported or dangling. */
  endAll(): void {
    for (const [id, s] of this.#facts.entries()) if (s.turn) this.#close(id, "disposed");
  }
}
