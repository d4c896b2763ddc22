import * as z from "../../governance/zod.ts";

const Count = z.number().finite().min(0).max(1e15);

/**
 * The OpenCode events the plugin acts on, parsed by type string. The plugin package types events as v1, but the
 * 1.18 runtime sends v2-shaped payloads (`properties.sessionID`, `properties.info`); both shapes are accepted and
 * anything unexpected is ignored rather than trusted.
 */
const Info = z
  .object({ id: z.string(), parentID: z.string().optional().nullable(), agent: z.string().optional().nullable(), title: z.unknown().optional() })
  .passthrough();

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

/** Tokens as OpenCode 1.18 reports them, on a session (its totals) or an assistant message (its own). */
const TokenUse = z.looseObject({
  input: Count.default(0),
  output: Count.default(0),
  reasoning: Count.default(0),
  cache: z.looseObject({ read: Count.default(0), write: Count.default(0) }).optional(),
});

/**
 * `session.updated`: OpenCode's running totals of the session's tokens and cost (what it computed from the provider's
 * usage and the model's prices), and its title (generated after the first prompt, or renamed by the user).
 */
export const SessionUsage = z.object({
  type: z.literal("session.updated"),
  properties: z.object({
    sessionID: z.string().optional(),
    info: z.looseObject({
      id: z.string(),
      title: z.unknown().optional(),
      cost: Count.optional(),
      tokens: TokenUse.optional(),
    }),
  }),
});

/** `message.updated` of an assistant message: that message's own tokens and cost (one model step in OpenCode 1.18). */
export const MessageUsage = z.object({
  type: z.literal("message.updated"),
  properties: z.object({
    info: z.looseObject({
      id: z.string().max(100),
      sessionID: z.string(),
      role: z.literal("assistant"),
      cost: Count.optional(),
      tokens: TokenUse.optional(),
    }),
  }),
});

/** `message.updated` → `message_usage` for an assistant message with usage, else undefined (docs/budgets.md). */
export type MessageUsageEvent = {
  type: "message_usage";
  sessionId: string;
  messageId: string;
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  cost: number;
};

/** Token counts as OpenCode reports them, checked as `Count` checks them (finite, 0 … 1e15, absent = 0). */
export type Tokens = { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };

/** A plain object (what zod's `object()` accepts: not null, not an array). */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** `Count.default(0)` without zod: `undefined` is 0, anything but a finite number in 0 … 1e15 is refused (NaN). */
const count = (v: unknown): number => (v === undefined ? 0 : typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1e15 ? v : Number.NaN);

/**
 * The `tokens` and `cost` of a message's or session's info, validated exactly as the zod schemas above validate them
 * (test/plugin/opencode-1/usage-reader.test.ts compares both on generated inputs) but without a schema parse: OpenCode
 * sends `message.updated` and `session.updated` several times per model step (issue 31). `undefined`: invalid, which
 * fails the whole event as the schema did; `null`: valid, without tokens.
 */
export function readUsage(info: Record<string, unknown>): { tokens: Tokens | null; cost: number } | undefined {
  const cost = count(info.cost);
  if (Number.isNaN(cost)) return undefined;
  const t = info.tokens;
  if (t === undefined) return { tokens: null, cost };
  if (!isRecord(t)) return undefined;
  const c = t.cache;
  if (c !== undefined && !isRecord(c)) return undefined;
  const n = [count(t.input), count(t.output), count(t.reasoning), count(c?.read), count(c?.write)];
  if (n.some(Number.isNaN)) return undefined;
  const int = (x: number) => Math.round(x);
  return { tokens: { input: int(n[0]!), output: int(n[1]!), reasoning: int(n[2]!), cacheRead: int(n[3]!), cacheWrite: int(n[4]!) }, cost };
}

export function parseMessageUsage(raw: unknown): MessageUsageEvent | undefined {
  // Cheap test first: most message updates are user messages or carry no usage yet.
  const info = (raw as { properties?: { info?: unknown } } | null)?.properties?.info;
  if (!isRecord(info) || info.role !== "assistant" || !info.tokens) return undefined;
  if (typeof info.id !== "string" || info.id.length > 100 || typeof info.sessionID !== "string") return undefined;
  const use = readUsage(info);
  if (!use?.tokens) return undefined;
  return { type: "message_usage", sessionId: info.sessionID, messageId: info.id, tokens: use.tokens, cost: use.cost };
}
