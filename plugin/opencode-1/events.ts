import * as z from "../../governance/zod.ts";
import { parseMessageUsage, readUsage } from "./message-usage.ts";

/**
 * The OpenCode events the plugin acts on, parsed by type string. The plugin package types events as v1, but the
 * 1.18 runtime sends v2-shaped payloads (`properties.sessionID`, `properties.info`); both shapes are accepted and
 * anything unexpected is ignored rather than trusted.
 */
const Info = z
  .object({ id: z.string(), parentID: z.string().optional().nullable(), agent: z.string().optional().nullable(), title: z.unknown().optional() })
  .passthrough();

const sessionIdOf = (p: { sessionID?: string | undefined; info?: { id: string } | undefined }) => p.sessionID ?? p.info?.id;

export const SessionCreated = z.object({
  type: z.literal("session.created"),
  properties: z.object({ sessionID: z.string().optional(), info: Info }),
});
export const SessionError = z.object({
  type: z.literal("session.error"),
  properties: z.object({
    sessionID: z.string().optional(),
    error: z.object({ name: z.string(), data: z.unknown().optional() }).passthrough().optional().nullable(),
  }),
});
const SessionOnly = z.object({ sessionID: z.string().optional(), info: Info.optional() });
/** `session.idle`, `session.compacted` and `session.deleted` carry only the session (deleted: its `info`). */
export const SessionOnlyEvent = z.object({ type: z.enum(["session.idle", "session.compacted", "session.deleted"]), properties: SessionOnly });
export const SessionStatus = z.object({
  type: z.literal("session.status"),
  properties: z.object({ sessionID: z.string(), status: z.object({ type: z.string() }).passthrough() }),
});
export const TodoUpdated = z.object({
  type: z.literal("todo.updated"),
  properties: z.object({ sessionID: z.string(), todos: z.array(z.object({ status: z.string() }).passthrough()) }),
});

/**
 * `session.updated`: OpenCode's running totals of the session's tokens and cost (what it computed from the provider's
 * usage and the model's prices), and its title (generated after the first prompt, or renamed by the user).
 */
const Count = z.number().finite().min(0).max(1e15);
export const SessionUsage = z.object({
  type: z.literal("session.updated"),
  properties: z.object({
    sessionID: z.string().optional(),
    info: z.looseObject({
      id: z.string(),
      title: z.unknown().optional(),
      cost: Count.optional(),
      tokens: z
        .looseObject({
          input: Count.default(0),
          output: Count.default(0),
          reasoning: Count.default(0),
          cache: z.looseObject({ read: Count.default(0), write: Count.default(0) }).optional(),
        })
        .optional(),
    }),
  }),
});

export type GovernanceEvent =
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
      tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
      cost: number;
    }
  /** One assistant message's own use (`message.updated`). */
  | {
      type: "message_usage";
      sessionId: string;
      messageId: string;
      tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
      cost: number;
    }
  /**
   * Streamed output or a part changing (`message.part.updated`, `message.part.delta`): a sign of life. `step`: the
   * host reports a model step began (OpenCode 1 `step-start` part, OpenCode 2 `session.step.started`). `toolEnded` is
   * the call id when the part is a tool call that reached its end (`completed` or `error`): OpenCode 1.18 reports every
   * end of a tool call this way, including those that run no `tool.execute.after` (a refused call, an unknown agent,
   * a permission denial, a thrown tool error, an abort). It releases a `task` call's spawn reservation and feeds the
   * coverage check (plugin/sessions/coverage-watch.ts).
   */
  | { type: "output"; sessionId: string; step?: true; toolEnded?: string };

const text = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/**
 * Maps a raw OpenCode 1 event to the governance events it means (most mean one, `session.updated` its usage and its
 * title), or an empty list for everything else. The OpenCode 2 adapter's parseV2Event has the same shape.
 */
export function parseEvents(raw: unknown): GovernanceEvent[] {
  if ((raw as { type?: unknown } | null)?.type === "session.updated") return sessionUpdated(raw);
  const event = parseEvent(raw);
  return event ? [event] : [];
}

/** `session.updated` (every change of the session's info): its usage when it carries tokens, its title when it has one. */
function sessionUpdated(raw: unknown): GovernanceEvent[] {
  // What SessionUsage checks, read directly (test/plugin/host/usage-reader.test.ts): this event comes several times a step.
  const p = (raw as { properties?: unknown }).properties;
  if (typeof p !== "object" || p === null || Array.isArray(p)) return [];
  const { sessionID, info } = p as { sessionID?: unknown; info?: unknown };
  if (sessionID !== undefined && typeof sessionID !== "string") return [];
  if (typeof info !== "object" || info === null || Array.isArray(info)) return [];
  const i = info as Record<string, unknown>;
  if (typeof i.id !== "string") return [];
  const use = readUsage(i);
  if (!use) return [];
  const out: GovernanceEvent[] = [];
  if (use.tokens) out.push({ type: "usage", sessionId: i.id, tokens: use.tokens, cost: use.cost });
  const title = text(i.title);
  if (title) out.push({ type: "titled", sessionId: i.id, title });
  return out;
}

function parseEvent(raw: unknown): GovernanceEvent | undefined {
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
      const e = SessionStatus.safeParse(raw);
      return e.success ? { type: "status", sessionId: e.data.properties.sessionID, status: e.data.properties.status.type } : undefined;
    }
    case "message.part.delta": {
      // Every streamed chunk: no schema parse here, one property read.
      const id = (raw as { properties?: { sessionID?: unknown } }).properties?.sessionID;
      return typeof id === "string" ? { type: "output", sessionId: id } : undefined;
    }
    case "message.part.updated": {
      // A few property reads, no schema parse: a step starting or a tool call finishing is what the host reports.
      const p = (
        raw as { properties?: { sessionID?: unknown; part?: { type?: unknown; sessionID?: unknown; callID?: unknown; state?: { status?: unknown } } } }
      ).properties;
      const part = p?.part;
      const id = typeof p?.sessionID === "string" ? p.sessionID : part?.sessionID;
      if (typeof id !== "string") return undefined;
      if (part?.type === "step-start") return { type: "output", sessionId: id, step: true };
      const status = part?.type === "tool" ? part.state?.status : undefined;
      if ((status === "completed" || status === "error") && typeof part?.callID === "string") return { type: "output", sessionId: id, toolEnded: part.callID };
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
      return parseMessageUsage(raw);
    default:
      return undefined;
  }
}
