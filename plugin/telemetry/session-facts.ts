import type { Span } from "@opentelemetry/api";
import type { Tokens } from "./host-signals.ts";

/** Sessions remembered at once (parent, depth, agent, state); the oldest without an open turn is forgotten first. */
export const MAX_SESSIONS = 5_000;

/** One open `invoke_agent` turn of a session. */
export type Turn = {
  span: Span;
  /** Token usage per assistant message of the turn (OpenCode updates a message several times; the last wins). */
  tokens: Map<string, Tokens>;
  provider?: string;
  model?: string;
  interrupted: boolean;
  /** A stop was requested during this turn: its abort is the stop's, not the user's Escape. */
  stopped?: boolean;
  error?: string;
  /** Set when OpenCode reported the turn over; the span ends a little later (turn-spans.ts), at this time. */
  endAt?: number;
  closer?: ReturnType<typeof setTimeout>;
};

export type SessionInfo = {
  /** Events of this session the governance `event` hook is still handling. */
  inFlight: number;
  parentId: string | null;
  depth: number | undefined;
  agent: string | undefined;
  state: string;
  turn: Turn | undefined;
};

/**
 * What telemetry knows about each session (parent, depth, agent, governance state, open turn), learned from the
 * host's events and the audit events. Bounded: at most MAX_SESSIONS, so a process that lives for days does not grow.
 */
export class SessionFacts {
  readonly #sessions = new Map<string, SessionInfo>();

  get(id: string): SessionInfo | undefined {
    return this.#sessions.get(id);
  }

  entries(): IterableIterator<[string, SessionInfo]> {
    return this.#sessions.entries();
  }

  ensure(id: string): SessionInfo {
    let s = this.#sessions.get(id);
    if (!s) {
      s = { inFlight: 0, parentId: null, depth: undefined, agent: undefined, state: "beginning", turn: undefined };
      this.#sessions.set(id, s);
      if (this.#sessions.size > MAX_SESSIONS) this.#forgetOldest();
    }
    return s;
  }

  #forgetOldest(): void {
    for (const [id, s] of this.#sessions) {
      if (s.turn) continue;
      this.#sessions.delete(id);
      return;
    }
  }

  /** The session's depth: from its record (audit) when known, else by walking the parents telemetry has seen. */
  depthOf(s: SessionInfo): number {
    if (s.depth !== undefined) return s.depth;
    let depth = 0;
    for (let p = s.parentId, guard = 0; p && guard < 32; guard++, depth++) p = this.#sessions.get(p)?.parentId ?? null;
    return depth;
  }

  /** Sessions by state and depth (the `governance.sessions` gauge). */
  census(): Map<string, { state: string; depth: number; count: number }> {
    const out = new Map<string, { state: string; depth: number; count: number }>();
    for (const s of this.#sessions.values()) {
      const depth = this.depthOf(s);
      const key = `${s.state}/${depth}`;
      const row = out.get(key) ?? { state: s.state, depth, count: 0 };
      row.count++;
      out.set(key, row);
    }
    return out;
  }

  /** Facts an audit event states about its session (state, depth, parent) or a child it names. */
  learn(id: string, type: string, data: Record<string, unknown>): SessionInfo {
    const s = this.ensure(id);
    if (type === "session_created") {
      s.state = "beginning";
      if (typeof data.depth === "number") s.depth = data.depth;
      if (typeof data.parentId === "string") s.parentId = data.parentId;
    } else if (type === "state_transition" && typeof data.to === "string") s.state = data.to;
    else if (type === "session_aborted") s.state = "interrupted";
    else if (type === "session_resumed") s.state = "resumed";
    else if (type === "session_compacted") s.state = "compacted";
    else if (type === "child_linked" && typeof data.childId === "string") {
      const child = this.ensure(data.childId);
      child.parentId = id;
      if (typeof data.agent === "string" && !child.agent) child.agent = data.agent;
      if (typeof data.depth === "number") child.depth = data.depth;
    }
    return s;
  }
}
