import type { HostEvent } from "../runtime/host-event.ts";
import { isRecord, parseMessageUsage, readUsage, SessionCreated, SessionError, SessionOnlyEvent, TodoUpdated } from "./types.ts";

const sessionIdOf = (p: { sessionID?: string | undefined; info?: { id: string } | undefined }) => p.sessionID ?? p.info?.id;

const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/**
 * OpenCode 1's ONE event parser: a raw bus event to the host events it means (most mean one, `session.updated` its
 * usage and its title), or an empty list for everything else. Governance (plugin/hooks/event.ts) and telemetry
 * (plugin/telemetry/host-signals.ts) both read its answer (plugin/opencode-1/event-source.ts); the OpenCode 2 adapter's
 * parser (plugin/opencode-2/events.ts) has the same shape. The plugin package types events as v1, but the 1.18
 * runtime sends v2-shaped payloads (`properties.sessionID`, `properties.info`); both are accepted and anything
 * unexpected is ignored rather than trusted.
 */
export function parseEvents(raw: unknown): HostEvent[] {
  if ((raw as { type?: unknown } | null)?.type === "session.updated") return sessionUpdated(raw);
  const event = parseEvent(raw);
  return event ? [event] : [];
}

/** `session.updated` (every change of the session's info): its usage when it carries tokens, its title when it has one. */
function sessionUpdated(raw: unknown): HostEvent[] {
  // What SessionUsage checks, read directly (test/plugin/opencode-1/usage-reader.test.ts): this event comes several times a step.
  const p = (raw as { properties?: unknown }).properties;
  if (typeof p !== "object" || p === null || Array.isArray(p)) return [];
  const { sessionID, info } = p as { sessionID?: unknown; info?: unknown };
  if (sessionID !== undefined && typeof sessionID !== "string") return [];
  if (typeof info !== "object" || info === null || Array.isArray(info)) return [];
  const i = info as Record<string, unknown>;
  if (typeof i.id !== "string") return [];
  const use = readUsage(i);
  if (!use) return [];
  const out: HostEvent[] = [];
  if (use.tokens) out.push({ type: "usage", sessionId: i.id, tokens: use.tokens, cost: use.cost });
  const title = text(i.title);
  if (title) out.push({ type: "titled", sessionId: i.id, title });
  return out;
}

function parseEvent(raw: unknown): HostEvent | undefined {
  const type = (raw as { type?: unknown } | null)?.type;
  switch (type) {
    case "session.created": {
      const e = SessionCreated.safeParse(raw);
      if (!e.success) return undefined;
      const info = e.data.properties.info;
      return { type: "created", sessionId: info.id, parentId: info.parentID ?? null, agent: info.agent ?? null, title: text(info.title) };
    }
    case "session.error": {
      const e = SessionError.safeParse(raw);
      const id = e.success ? e.data.properties.sessionID : undefined;
      if (!e.success || !id) return undefined;
      const name = e.data.properties.error?.name ?? "UnknownError";
      return name === "MessageAbortedError" ? { type: "aborted", sessionId: id } : { type: "errored", sessionId: id, name };
    }
    case "session.idle":
    case "session.compacted":
    case "session.deleted": {
      const e = SessionOnlyEvent.safeParse(raw);
      const id = e.success ? sessionIdOf(e.data.properties) : undefined;
      if (!id) return undefined;
      return { type: type === "session.idle" ? "idle" : type === "session.compacted" ? "compacted" : "deleted", sessionId: id };
    }
    case "session.status": {
      // Twice a model step: what `SessionStatus` checks, read directly (test/plugin/opencode-1/usage-reader.test.ts).
      const p = (raw as { properties?: unknown }).properties;
      if (!isRecord(p) || typeof p.sessionID !== "string" || !isRecord(p.status) || typeof p.status.type !== "string") return undefined;
      return { type: "status", sessionId: p.sessionID, status: p.status.type };
    }
    case "message.part.delta": {
      // Every streamed chunk: no schema parse here, one property read.
      const id = (raw as { properties?: { sessionID?: unknown } }).properties?.sessionID;
      return typeof id === "string" ? { type: "output", sessionId: id } : undefined;
    }
    case "message.part.updated": {
      // A few property reads, no schema parse: a step starting or a tool call finishing is what the host reports.
      const p = (raw as { properties?: { sessionID?: unknown; part?: Part } }).properties;
      const part = p?.part;
      const id = typeof p?.sessionID === "string" ? p.sessionID : part?.sessionID;
      if (typeof id !== "string") return undefined;
      if (part?.type === "step-start") return { type: "output", sessionId: id, step: true };
      const status = part?.type === "tool" ? part.state?.status : undefined;
      if ((status === "completed" || status === "error") && typeof part?.callID === "string")
        return { type: "output", sessionId: id, toolEnded: part.callID, ...toolEnd(part, status) };
      return { type: "output", sessionId: id };
    }
    case "todo.updated": {
      const e = TodoUpdated.safeParse(raw);
      if (!e.success) return undefined;
      const todos = e.data.properties.todos;
      return {
        type: "todos",
        sessionId: e.data.properties.sessionID,
        total: todos.length,
        open: todos.filter((t) => t.status !== "completed" && t.status !== "cancelled").length,
      };
    }
    case "message.updated":
      return messageUpdated(raw);
    default:
      return undefined;
  }
}

type Part = { type?: unknown; sessionID?: unknown; callID?: unknown; tool?: unknown; state?: { status?: unknown; time?: { start?: unknown; end?: unknown } } };
const time = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/** A finished tool part's name and times, for telemetry's span (absent when the part names no tool). */
function toolEnd(part: Part, status: "completed" | "error"): { tool?: { tool: string; status: "completed" | "error"; start: number; end: number } } {
  if (typeof part.tool !== "string" || part.tool === "") return {};
  const start = time(part.state?.time?.start);
  return { tool: { tool: part.tool, status, start, end: time(part.state?.time?.end) || start } };
}

/**
 * `message.updated` of an assistant message: its own tokens and cost when it has them (`message_usage`, docs/budgets.md;
 * read without a schema parse: types.ts `parseMessageUsage`), else its model and agent alone (`step_model`, for
 * telemetry). User messages and anything malformed give nothing.
 */
function messageUpdated(raw: unknown): HostEvent | undefined {
  // Cheap test first: most message updates are user messages.
  const info = (raw as { properties?: { info?: Record<string, unknown> } } | null)?.properties?.info;
  if (info?.role !== "assistant") return undefined;
  const model: { provider?: string; model?: string; agent?: string } = {};
  const provider = str(info.providerID);
  const modelId = str(info.modelID);
  const agent = str(info.agent) ?? str(info.mode);
  if (provider) model.provider = provider;
  if (modelId) model.model = modelId;
  if (agent) model.agent = agent;
  // A finished answer: completed, and not a step that ends in tool calls (OpenCode's loop goes on after those).
  const done = isRecord(info.time) && typeof info.time.completed === "number" && typeof info.finish === "string" && info.finish !== "tool-calls";
  const answered = done ? ({ answered: true } as const) : {};
  if (info.tokens) {
    const use = parseMessageUsage(raw);
    if (use) return { ...use, ...model, ...answered };
  }
  const sessionId = str(info.sessionID);
  const messageId = str(info.id);
  return sessionId && messageId && (!info.tokens || done) ? { type: "step_model", sessionId, messageId, ...model, ...answered } : undefined;
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
