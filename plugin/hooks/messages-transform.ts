import { firstActionDue } from "../../governance/session/first-action.ts";
import { resumeContextDue } from "../../governance/session/session-machine.ts";
import { modelStaleWarnings } from "../../governance/session/stale-state.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { buildPostCompactReminder } from "../../governance/texts/post-compact-reminder.ts";
import { buildResumeContext } from "../../governance/texts/resume-context.ts";
import { buildStatusNote } from "../../governance/texts/status-note.ts";
import { takeNotifications } from "../stop/directive-delivery.ts";
import { interruptedWork } from "../sessions/descendants.ts";
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
 * agent from its user messages, delivers notifications queued for this session (e.g. "your subagent was stopped")
 * that no tool result has carried yet, and ends the request with the status note: the governance text that can
 * change between steps (resume context, post-compaction reminder until a turn completes after the compaction
 * (S2-R01), a missed first action, todos, stale-state warnings, orphans), as one synthetic user message after the last message. Nothing is added to a message a
 * later step sends again without it, so each request repeats the previous one up to this note and a provider's
 * prompt cache holds (docs/decisions/0011-stable-system-prompt.md).
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

  const notes = await takeNotifications(runner, rt.stops, sessionId);
  if (notes.length > 0) attachNotice(messages, notes.join("\n\n"), ctx.clock.now());
  // The summarizer's copy of the history (OpenCode calls this transform for it right after the compacting hook).
  if (rt.summarizing.delete(sessionId)) return;
  const current = sessions.peek(sessionId);
  if (!current) return;
  const note = buildStatusNote({
    resume: resumeContextDue(current) ? await rt.resumeNotes.textFor(current, () => resumeText(rt, current)) : undefined,
    reminder: current.compactedPending ? reminderText(rt, current, agent) : undefined,
    todo: current.todo,
    orphans: tracker.orphanNotes(sessionId),
    stale: modelStaleWarnings(current, ctx.clock.now()),
    firstAction: firstActionDue(current),
  });
  if (!current.resume) rt.resumeNotes.forget(sessionId);
  if (note) appendStatusMessage(messages, sessionId, note);
}

/** S5 resume context of a resumed primary, built once per resume (it reads the descendants' records). */
async function resumeText(rt: Runtime, record: SessionRecord): Promise<string> {
  const resume = record.resume!;
  return buildResumeContext({
    idleMs: resume.idleMs,
    previousActivityAt: resume.previousActivityAt,
    previousState: resume.previousState,
    interrupted: resume.interrupted,
    interruptedWork: await interruptedWork(rt.ctx, record),
    anchors: rt.ctx.config.anchors,
    todo: record.todo,
  });
}

function reminderText(rt: Runtime, record: SessionRecord, agent: string | null): string {
  const config = rt.ctx.config;
  return buildPostCompactReminder({
    language: config.language,
    phase: config.phase,
    recentActions: record.recentActions,
    anchors: config.anchors,
    who: rt.ctx.viewOf(record.agent ?? agent, record.depth),
  });
}

/** The status note as its own synthetic user message at the very end of this step's copy (never persisted). */
function appendStatusMessage(messages: Message[], sessionId: string, text: string): void {
  const id = "msg_governance_status";
  messages.push({
    info: { id, sessionID: sessionId, role: "user" },
    parts: [{ id: "prt_governance_status", sessionID: sessionId, messageID: id, type: "text", text, synthetic: true }],
  });
}
