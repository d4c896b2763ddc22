import type { HostEvent, Tokens as HostTokens } from "../runtime/host-event.ts";

/**
 * What telemetry draws from the host's events (only while export is on): turn boundaries, the model and token usage
 * of each model step, finished tool calls. Not parsed here: each adapter's one parser (plugin/opencode-1/events.ts,
 * plugin/opencode-2/events.ts) gives the host events governance also reads, and `signalsOf` only selects from them.
 */
export type Tokens = { input: number; output: number; cacheRead: number; cacheWrite: number };

export type HostSignal =
  | { type: "created"; sessionId: string; parentId: string | null }
  | { type: "busy"; sessionId: string }
  | { type: "idle"; sessionId: string }
  | { type: "error"; sessionId: string; name: string }
  | { type: "assistant"; sessionId: string; messageId: string; provider?: string; model?: string; agent?: string; tokens?: Tokens }
  | { type: "tool"; sessionId: string; callId: string; tool: string; status: "completed" | "error"; start: number; end: number };

/** Telemetry counts reasoning with the output (gen_ai usage). */
const tokensOf = (t: HostTokens): Tokens => ({ input: t.input, output: t.output + t.reasoning, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite });

/** The signals in one host event's meaning (an end of turn that did not succeed is two: how it ended, then that it ended). */
export function signalsOf(events: readonly HostEvent[]): HostSignal[] {
  const out: HostSignal[] = [];
  for (const e of events) {
    const sessionId = e.sessionId;
    switch (e.type) {
      case "created":
        out.push({ type: "created", sessionId, parentId: e.parentId });
        break;
      case "status":
        if (e.status === "busy") out.push({ type: "busy", sessionId });
        else if (e.status === "idle") idle(out, sessionId);
        break;
      case "idle":
        idle(out, sessionId);
        break;
      case "aborted":
        // The user's Escape marks the turn interrupted, not failed; the host's own stop (OpenCode 2 `inactivity`) says so.
        out.push({ type: "error", sessionId, name: e.cause === "host" ? "Interrupted:inactivity" : "MessageAbortedError" });
        break;
      case "turn_cut":
        out.push({ type: "error", sessionId, name: `Interrupted:${e.reason}` });
        break;
      case "errored":
        out.push({ type: "error", sessionId, name: e.name });
        break;
      case "message_usage":
        out.push({ type: "assistant", sessionId, messageId: e.messageId, provider: e.provider, model: e.model, agent: e.agent, tokens: tokensOf(e.tokens) });
        break;
      case "step_model":
        out.push({
          type: "assistant",
          sessionId,
          messageId: e.messageId,
          provider: e.provider,
          model: e.model,
          agent: e.agent,
          tokens: e.tokens ? tokensOf(e.tokens) : undefined,
        });
        break;
      case "output":
        if (e.tool && e.toolEnded) out.push({ type: "tool", sessionId, callId: e.toolEnded, ...e.tool });
        break;
    }
  }
  // The end of a turn that did not succeed: how it ended first, then that it ended (turn-spans.ts reads them in order).
  return out.sort((a, b) => rank(a) - rank(b));
}

/** One end of a turn per host event (OpenCode 2's end of a turn is a status and an idle to governance). */
function idle(out: HostSignal[], sessionId: string): void {
  if (!out.some((s) => s.type === "idle" && s.sessionId === sessionId)) out.push({ type: "idle", sessionId });
}

const rank = (s: HostSignal): number => (s.type === "error" ? 0 : s.type === "idle" ? 1 : 0);
