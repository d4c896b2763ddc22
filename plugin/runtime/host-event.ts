/**
 * What a host reports, in the plugin's own words: each adapter's ONE event parser (plugin/opencode-1/events.ts,
 * plugin/opencode-2/events.ts) turns its host's bus into these, and both governance (plugin/hooks/event.ts) and the
 * telemetry export (plugin/telemetry/host-signals.ts `signalsOf`) read them — a host event is parsed once.
 */
export type Tokens = { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };

/** A tool call the host reports finished, as telemetry draws it (a span from `start` to `end`). */
export type ToolEnd = { tool: string; status: "completed" | "error"; start: number; end: number };

export type HostEvent =
  /** `title`: OpenCode's, as sent (cleaned by the core, governance/session/session-title.ts). */
  | { type: "created"; sessionId: string; parentId: string | null; agent: string | null; title: string | null }
  /** OpenCode named or renamed the session: `session.updated` (OpenCode 1), `session.renamed` (OpenCode 2). */
  | { type: "titled"; sessionId: string; title: string }
  /** `cause: "host"`: the host stopped a stalled turn itself (OpenCode 2 `inactivity`), not the user's Escape. */
  | { type: "aborted"; sessionId: string; cause?: "host" }
  | { type: "errored"; sessionId: string; name: string }
  | { type: "idle"; sessionId: string }
  | { type: "compacted"; sessionId: string; trigger?: "auto" | "summarize" }
  | { type: "deleted"; sessionId: string }
  | { type: "status"; sessionId: string; status: string }
  | { type: "todos"; sessionId: string; total: number; open: number }
  | {
      type: "usage";
      sessionId: string;
      tokens: Tokens;
      cost: number;
    }
  /** One assistant message's own use (`message.updated`); its model and agent are read by telemetry only. */
  | {
      type: "message_usage";
      sessionId: string;
      messageId: string;
      tokens: Tokens;
      cost: number;
      provider?: string;
      model?: string;
      agent?: string;
      /** The message is a finished answer (not a tool-call step): the turn is over before the host's idle says so. */
      answered?: true;
    }
  /**
   * A model step's model and agent (OpenCode 2 `session.step.started`) or its usage (`session.step.ended`): read by
   * telemetry only (OpenCode 2's budgets count `session.usage.updated`).
   */
  | { type: "step_model"; sessionId: string; messageId: string; provider?: string; model?: string; agent?: string; tokens?: Tokens; answered?: true }
  /** A turn the host ended for its own reasons (OpenCode 2 `superseded`, `shutdown`): telemetry marks the turn; governance sees only the idle. */
  | { type: "turn_cut"; sessionId: string; reason: string }
  /**
   * Streamed output or a part changing (`message.part.updated`, `message.part.delta`): a sign of life. `step`: the
   * host reports a model step began (OpenCode 1 `step-start` part, OpenCode 2 `session.step.started`). `toolEnded` is
   * the call id when the part is a tool call that reached its end (`completed` or `error`): OpenCode 1.18 reports every
   * end of a tool call this way, including those that run no `tool.execute.after` (a refused call, an unknown agent,
   * a permission denial, a thrown tool error, an abort). It releases a `task` call's spawn reservation and feeds the
   * coverage check (plugin/sessions/coverage-watch.ts). `tool`: its name and times when the host gave them (telemetry's span).
   */
  | { type: "output"; sessionId: string; step?: true; toolEnded?: string; tool?: ToolEnd }
  /** A finished piece of the session's answer text (OpenCode 2 `session.text.ended`; OpenCode 1 has a hook for it). */
  | { type: "answer"; sessionId: string; text: string };

/** The events only telemetry reads: governance returns on them before any work. */
export const TELEMETRY_ONLY: ReadonlySet<HostEvent["type"]> = new Set(["step_model", "turn_cut"]);
