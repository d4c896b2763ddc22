/**
 * The OpenCode bus events telemetry reads (only while export is on): turn boundaries, the model and token usage of
 * assistant messages, tool parts — OpenCode 1's, and OpenCode 2's (see parseV2Signal). Parsed defensively by hand (the 1.18 runtime sends v2-shaped payloads; anything
 * unexpected is ignored). Kept apart from plugin/host/opencode-events.ts, which parses what governance acts on.
 */
export type Tokens = { input: number; output: number; cacheRead: number; cacheWrite: number };

export type HostSignal =
  | { type: "created"; sessionId: string; parentId: string | null }
  | { type: "busy"; sessionId: string }
  | { type: "idle"; sessionId: string }
  | { type: "error"; sessionId: string; name: string }
  | { type: "assistant"; sessionId: string; messageId: string; provider?: string; model?: string; agent?: string; tokens?: Tokens }
  | { type: "tool"; sessionId: string; callId: string; tool: string; status: "completed" | "error"; start: number; end: number };

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

function tokensOf(v: unknown): Tokens | undefined {
  const t = obj(v);
  if (!t) return undefined;
  const cache = obj(t.cache);
  return { input: num(t.input), output: num(t.output) + num(t.reasoning), cacheRead: num(cache?.read), cacheWrite: num(cache?.write) };
}

/**
 * OpenCode 2's events (`{type, data}`; packages/schema/src/session-event.ts @ 03130971): the turn is
 * `session.execution.*` (`session.status`/`session.idle` are never emitted), a step's model and agent come with
 * `session.step.started`, its usage with `session.step.ended`.
 */
function parseV2Signal(type: unknown, d: Obj): HostSignal[] {
  const sessionId = str(d.sessionID);
  if (!sessionId) return [];
  const messageId = str(d.assistantMessageID);
  switch (type) {
    case "session.created":
      return [{ type: "created", sessionId, parentId: str(d.parentID) ?? null }];
    case "session.execution.started":
      return [{ type: "busy", sessionId }];
    case "session.execution.succeeded":
      return [{ type: "idle", sessionId }];
    case "session.execution.interrupted":
      // Escape (`user`) is OpenCode 1's MessageAbortedError: the turn is marked interrupted, not failed.
      return [
        { type: "error", sessionId, name: d.reason === "user" ? "MessageAbortedError" : `Interrupted:${str(d.reason) ?? "unknown"}` },
        { type: "idle", sessionId },
      ];
    case "session.execution.failed":
      return [
        { type: "error", sessionId, name: str(obj(d.error)?._tag) ?? str(obj(d.error)?.name) ?? "UnknownError" },
        { type: "idle", sessionId },
      ];
    case "session.step.started": {
      const model = obj(d.model);
      return messageId ? [{ type: "assistant", sessionId, messageId, provider: str(model?.providerID), model: str(model?.id), agent: str(d.agent) }] : [];
    }
    case "session.step.ended":
      return messageId ? [{ type: "assistant", sessionId, messageId, tokens: tokensOf(d.tokens) }] : [];
    default:
      return [];
  }
}

/** The signals in one host event (OpenCode 2's end of a turn is two: how it ended, and that it ended). */
export function parseHostSignals(raw: unknown): HostSignal[] {
  const event = obj(raw);
  const v2 = obj(event?.data);
  if (event && v2 && !event.properties) return parseV2Signal(event.type, v2);
  const one = parseV1Signal(event);
  return one ? [one] : [];
}

function parseV1Signal(event: Obj | undefined): HostSignal | undefined {
  const p = obj(event?.properties);
  if (!event || !p) return undefined;
  switch (event.type) {
    case "session.created": {
      const info = obj(p.info);
      const id = str(info?.id);
      return id ? { type: "created", sessionId: id, parentId: str(info?.parentID) ?? null } : undefined;
    }
    case "session.status": {
      const id = str(p.sessionID);
      const status = str(obj(p.status)?.type);
      if (!id || !status) return undefined;
      return status === "idle" ? { type: "idle", sessionId: id } : status === "busy" ? { type: "busy", sessionId: id } : undefined;
    }
    case "session.idle": {
      const id = str(p.sessionID) ?? str(obj(p.info)?.id);
      return id ? { type: "idle", sessionId: id } : undefined;
    }
    case "session.error": {
      const id = str(p.sessionID);
      return id ? { type: "error", sessionId: id, name: str(obj(p.error)?.name) ?? "UnknownError" } : undefined;
    }
    case "message.updated": {
      const info = obj(p.info);
      if (info?.role !== "assistant") return undefined;
      const sessionId = str(info.sessionID);
      const messageId = str(info.id);
      if (!sessionId || !messageId) return undefined;
      return {
        type: "assistant",
        sessionId,
        messageId,
        provider: str(info.providerID),
        model: str(info.modelID),
        agent: str(info.agent) ?? str(info.mode),
        tokens: tokensOf(info.tokens),
      };
    }
    case "message.part.updated": {
      const part = obj(p.part);
      if (part?.type !== "tool") return undefined;
      const state = obj(part.state);
      const status = state?.status;
      if (status !== "completed" && status !== "error") return undefined;
      const time = obj(state?.time);
      const sessionId = str(part.sessionID);
      const callId = str(part.callID);
      const tool = str(part.tool);
      if (!sessionId || !callId || !tool) return undefined;
      const start = num(time?.start);
      const end = num(time?.end) || start;
      return { type: "tool", sessionId, callId, tool, status, start, end };
    }
    default:
      return undefined;
  }
}
