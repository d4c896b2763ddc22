import type { HostEvent, Tokens } from "../runtime/host-event.ts";
import type { V2Event } from "./types.ts";

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The session an OpenCode 2 event is about: `data.sessionID`, else the durable aggregate (packages/schema/src/event.ts). */
export function sessionOf(event: V2Event): string | undefined {
  return str(obj(event.data).sessionID) ?? str(event.durable?.aggregateID);
}

/** The directory an event names, when it names one: the envelope's `location`, or `session.created`'s `data.location`. */
export function locationOf(event: V2Event): string | undefined {
  return str(event.location?.directory) ?? str(obj(obj(event.data).location).directory);
}

/**
 * OpenCode 2's ONE event parser: what an event means, as the SAME host events the OpenCode 1 adapter produces, or an
 * empty list; governance and telemetry both read its answer (event-source.ts).
 * packages/schema/src/session-event.ts @ 03130971: the turn boundary is `session.execution.*` (`session.idle` and
 * `session.status` are never emitted), Escape is `session.execution.interrupted` with reason `user`, compaction ends
 * with `session.compaction.ended` (reason auto | manual), the session's usage (cost, tokens) is `session.usage.updated`,
 * a title given or changed is `session.renamed`, and the streamed fragments (`session.text.delta`, `session.reasoning.delta`, `session.tool.input.delta`, ephemeral)
 * are the signs of life OpenCode 1 gives as `message.part.delta`.
 */
export function parseV2Event(raw: unknown): HostEvent[] {
  const event = obj(raw) as V2Event;
  const type = str(event.type);
  const sessionId = type ? sessionOf(event) : undefined;
  if (!type || !sessionId) return [];
  const data = obj(event.data);
  switch (type) {
    case "session.created":
      return [{ type: "created", sessionId, parentId: str(data.parentID) ?? null, agent: str(data.agent) ?? null, title: str(data.title) ?? null }];
    case "session.renamed": {
      // The title OpenCode generated or the user gave (packages/schema/src/session-event.ts: `Renamed { sessionID, title }`).
      const title = str(data.title);
      return title ? [{ type: "titled", sessionId, title }] : [];
    }
    case "session.execution.started":
      return [{ type: "status", sessionId, status: "busy" }];
    case "session.execution.succeeded":
      return [
        { type: "status", sessionId, status: "idle" },
        { type: "idle", sessionId },
      ];
    case "session.execution.failed": {
      const name = str(obj(data.error)._tag) ?? str(obj(data.error).name) ?? str(obj(data.error).type) ?? "UnknownError";
      return [
        { type: "errored", sessionId, name },
        { type: "status", sessionId, status: "idle" },
        { type: "idle", sessionId },
      ];
    }
    case "session.execution.interrupted": {
      // `user` is Escape (or our own session.interrupt); `superseded` is a new prompt taking over the turn and
      // `shutdown` the server going down: neither is the user stopping the session. `inactivity` (release line) is
      // the host's own idle timeout stopping a stalled turn: the session IS interrupted, by the host, not by the user.
      if (data.reason === "inactivity")
        return [
          { type: "status", sessionId, status: "idle" },
          { type: "aborted", sessionId, cause: "host" },
        ];
      if (data.reason !== "user")
        return [
          { type: "status", sessionId, status: "idle" },
          { type: "turn_cut", sessionId, reason: str(data.reason) ?? "unknown" },
        ];
      return [
        { type: "status", sessionId, status: "idle" },
        { type: "aborted", sessionId },
      ];
    }
    case "session.step.started": {
      // The host reports a model step: the coverage check sets it against the steps that carried the prefix; its
      // model and agent are telemetry's.
      const model = obj(data.model);
      const messageId = str(data.assistantMessageID);
      const step: HostEvent = { type: "output", sessionId, step: true };
      if (!messageId) return [step];
      return [
        step,
        { type: "step_model", sessionId, messageId, ...defined({ provider: str(model.providerID), model: str(model.id), agent: str(data.agent) }) },
      ];
    }
    case "session.step.ended": {
      // The step's usage, for telemetry (budgets count `session.usage.updated`).
      const messageId = str(data.assistantMessageID);
      return messageId ? [{ type: "step_model", sessionId, messageId, tokens: tokensOf(data.tokens) }] : [];
    }
    case "session.tool.success":
    case "session.tool.failed": {
      // The host reports a tool call finished: set against the calls the gate saw. 2.0.15 names the call `id` (the
      // same id `execute.before` gave the gate: test/fixtures/opencode-2.0.15/event.session.tool.success.json); a
      // `callID` here was a double's invention, and with it coverage counted 0 tools on the real host (issue 40).
      const callId = str(data.id);
      return callId ? [{ type: "output", sessionId, toolEnded: callId }] : [{ type: "output", sessionId }];
    }
    case "session.text.ended": {
      // The finished text of one part of the answer (`{ sessionID, assistantMessageID, ordinal, text }` in 2.0.15's
      // schema): a subagent's last one is what it hands back to its parent if a stop ends it (issue 44 item 3).
      const text = typeof data.text === "string" ? data.text : "";
      return text.trim() ? [{ type: "answer", sessionId, text }] : [{ type: "output", sessionId }];
    }
    case "session.text.delta":
    case "session.reasoning.delta":
    case "session.tool.input.delta":
      // Streamed answer, thinking or tool input: a sign of life (a stopping child writing its summary is not stuck).
      return [{ type: "output", sessionId }];
    case "session.compaction.ended":
      return [{ type: "compacted", sessionId, trigger: data.reason === "auto" ? "auto" : "summarize" }];
    case "session.usage.updated": {
      // The session's usage so far (cost in USD, TokenUsage.Info): what OpenCode 1 reports in `session.updated`.
      const cost = typeof data.cost === "number" && Number.isFinite(data.cost) && data.cost >= 0 ? data.cost : 0;
      return [{ type: "usage", sessionId, tokens: tokensOf(data.tokens), cost }];
    }
    default:
      return [];
  }
}

/** `TokenUsage.Info` (input, output, reasoning, cache read/write), each a count or 0. */
function tokensOf(v: unknown): Tokens {
  const t = obj(v);
  const cache = obj(t.cache);
  const n = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? Math.round(x) : 0);
  return { input: n(t.input), output: n(t.output), reasoning: n(t.reasoning), cacheRead: n(cache.read), cacheWrite: n(cache.write) };
}

function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
