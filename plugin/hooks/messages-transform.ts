import { buildPostCompactReminder } from "../../governance/texts/post-compact-reminder.ts";
import { takeNotifications } from "../stop/directive-delivery.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** The fields of OpenCode's message info and parts this hook reads; everything else is passed through untouched. */
type MessageInfo = { sessionID?: string; role?: string; agent?: string; id?: string };
type Message = { info: MessageInfo; parts: object[] };
type ToolState = { status?: unknown; output?: unknown; error?: unknown };

const field = (part: object, key: string): unknown => (part as Record<string, unknown>)[key];

/** Adds a synthetic text part to the last message of this step's copy (the transform output is never persisted). */
function appendText(messages: Message[], text: string, now: number): void {
  const last = messages.at(-1);
  if (!last) return;
  const template = last.parts[0] ?? {};
  last.parts.push({
    id: `prt_governance_${now.toString(36)}`,
    sessionID: field(template, "sessionID") ?? last.info.sessionID,
    messageID: field(template, "messageID") ?? last.info.id,
    type: "text",
    text,
    synthetic: true,
  });
}

/**
 * Attaches a notification where the model reads results: to the last tool result of this step's copy (e.g. the
 * parent's `task` that came back "Task cancelled"), or to the last user message when there is none. Never as
 * assistant text, which the model would take for its own words.
 */
function attachNotice(messages: Message[], text: string, now: number): void {
  const last = messages.at(-1);
  if (last?.info.role === "assistant") {
    const state = last.parts
      .filter((p) => field(p, "type") === "tool")
      .map((p) => field(p, "state") as ToolState | undefined)
      .findLast((s) => s?.status === "completed" || s?.status === "error");
    if (state) {
      if (state.status === "error") state.error = `${String(state.error ?? "")}\n\n${text}`;
      else state.output = `${text}\n\n${String(state.output ?? "")}`;
      return;
    }
  }
  const lastUser = messages.findLast((m) => m.info.role === "user");
  if (lastUser) appendText([lastUser], text, now);
}

/**
 * `experimental.chat.messages.transform` (input is `{}`; the session comes from the messages). Learns the session's
 * agent from its user messages, adds the post-compaction reminder on every step until a turn completes after the
 * compaction (S2-R01), and delivers notifications queued for this session (e.g. "your subagent was stopped") that no
 * tool result has carried yet.
 */
export async function messagesTransform(rt: Runtime, output: { messages: Message[] }): Promise<void> {
  const { ctx, tracker, runner, sessions } = rt;
  const messages = output.messages;
  const sessionId = messages.find((m) => m.info.sessionID)?.info.sessionID;
  if (!sessionId) return;
  const agent = messages.findLast((m) => m.info.role === "user" && m.info.agent)?.info.agent ?? null;
  await tracker.ensureSeen(sessionId, agent);
  const seen = sessions.peek(sessionId);
  // Soft (in memory, written behind): this runs before the session's first model request, which must not wait for a
  // durable write; the agent is written with the next durable change or within a second.
  if (agent && seen && seen.agent !== agent) await runner.dispatch(sessionId, { type: "agent_learned", at: ctx.clock.now(), agent }, { soft: true });

  const current = sessions.peek(sessionId);
  const config = ctx.config;
  if (current?.compactedPending) {
    const reminder = buildPostCompactReminder({
      language: config.language,
      phase: config.phase,
      recentActions: current.recentActions,
      anchors: config.anchors,
      who: ctx.viewOf(current.agent ?? agent, current.depth),
    });
    appendText(messages, reminder, ctx.clock.now());
  }
  const notes = await takeNotifications(runner, rt.stops, sessionId);
  if (notes.length > 0) attachNotice(messages, notes.join("\n\n"), ctx.clock.now());
}
