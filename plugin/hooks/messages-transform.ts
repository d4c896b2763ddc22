import { roleOf } from "../../governance/delegation/delegation-policy.ts";
import { buildPostCompactReminder } from "../../governance/texts/post-compact-reminder.ts";
import type { Governor } from "../governor.ts";
import type { StopController } from "../stop-controller.ts";

type Message = { info: { sessionID?: string; role?: string; agent?: string; id?: string }; parts: Record<string, unknown>[] };

/** Adds a synthetic text part to the last message of this step's copy (the transform output is never persisted). */
function appendText(messages: Message[], text: string): void {
  const last = messages.at(-1);
  if (!last) return;
  const template = last.parts[0] ?? {};
  last.parts.push({
    id: `prt_governance_${Date.now().toString(36)}`,
    sessionID: template.sessionID ?? last.info.sessionID,
    messageID: template.messageID ?? last.info.id,
    type: "text",
    text,
    synthetic: true,
  });
}

type ToolPart = { type: "tool"; state?: { status?: string; output?: unknown; error?: unknown } };

/**
 * Attaches a notification where the model reads results: to the last tool result of this step's copy (e.g. the
 * parent's `task` that came back "Task cancelled"), or to the last user message when there is none. Never as
 * assistant text, which the model would take for its own words.
 */
function attachNotice(messages: Message[], text: string): void {
  const last = messages.at(-1);
  if (last?.info.role === "assistant") {
    const tool = last.parts.findLast((p): p is ToolPart => p.type === "tool" && ["completed", "error"].includes(String((p as ToolPart).state?.status)));
    if (tool?.state) {
      if (tool.state.status === "error") tool.state.error = `${String(tool.state.error ?? "")}\n\n${text}`;
      else tool.state.output = `${text}\n\n${String(tool.state.output ?? "")}`;
      return;
    }
  }
  const lastUser = messages.findLast((m) => m.info.role === "user");
  if (lastUser) appendText([lastUser], text);
}

/**
 * `experimental.chat.messages.transform` (input is `{}`; the session comes from the messages). Learns the session's
 * agent from its user messages, adds the post-compaction reminder on every step until a turn completes after the
 * compaction (S2-R01), and delivers notifications queued for this session (e.g. "your subagent was stopped") that no
 * tool result has carried yet.
 */
export async function messagesTransform(gov: Governor, stops: StopController, output: { messages: Message[] }): Promise<void> {
  const messages = output.messages;
  const sessionId = messages.find((m) => m.info.sessionID)?.info.sessionID;
  if (!sessionId) return;
  const agent = messages.findLast((m) => m.info.role === "user" && m.info.agent)?.info.agent ?? null;
  await gov.ensureSeen(sessionId, agent);
  const seen = gov.peek(sessionId);
  if (agent && seen && seen.agent !== agent) await gov.update(sessionId, (r) => (r && r.agent !== agent ? { ...r, agent } : r));

  const current = gov.peek(sessionId);
  if (current?.compactedPending) {
    const policy = roleOf(current.agent ?? agent, gov.config);
    appendText(
      messages,
      buildPostCompactReminder({
        language: gov.config.language,
        phase: gov.config.phase,
        recentActions: current.recentActions,
        anchors: gov.config.anchors,
        role: policy.role,
        agent: current.agent ?? agent,
        level: current.level,
        depth: current.depth,
        maxDepth: gov.config.delegation.maxDepth,
        mayDelegateTo: policy.mayDelegateTo,
      }),
    );
  }
  const notes = await stops.takeNotifications(sessionId);
  if (notes.length > 0) attachNotice(messages, notes.join("\n\n"));
}
