import * as z from "../../governance/zod.ts";

const Count = z.number().finite().min(0).max(1e15);

/** `message.updated` of an assistant message: that message's own tokens and cost (one model step in OpenCode 1.18). */
export const MessageUsage = z.object({
  type: z.literal("message.updated"),
  properties: z.object({
    info: z.looseObject({
      id: z.string().max(100),
      sessionID: z.string(),
      role: z.literal("assistant"),
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

/** `message.updated` → `message_usage` for an assistant message with usage, else undefined (docs/budgets.md). */
export type MessageUsageEvent = {
  type: "message_usage";
  sessionId: string;
  messageId: string;
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number };
  cost: number;
};

export function parseMessageUsage(raw: unknown): MessageUsageEvent | undefined {
  // Cheap test first: most message updates are user messages or carry no usage yet.
  const info = (raw as { properties?: { info?: { role?: unknown; tokens?: unknown } } }).properties?.info;
  if (info?.role !== "assistant" || !info.tokens) return undefined;
  const e = MessageUsage.safeParse(raw);
  if (!e.success || !e.data.properties.info.tokens) return undefined;
  const m = e.data.properties.info;
  const t = m.tokens as NonNullable<typeof m.tokens>;
  const int = (n: number) => Math.round(n);
  return {
    type: "message_usage",
    sessionId: m.sessionID,
    messageId: m.id,
    tokens: {
      input: int(t.input),
      output: int(t.output),
      reasoning: int(t.reasoning),
      cacheRead: int(t.cache?.read ?? 0),
      cacheWrite: int(t.cache?.write ?? 0),
    },
    cost: m.cost ?? 0,
  };
}
