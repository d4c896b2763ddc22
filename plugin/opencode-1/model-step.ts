import { type ModelStep, stepNotes } from "../hooks/step-notes.ts";
import { prefixStep } from "../hooks/step-prefix.ts";
import type { HostEvent } from "../runtime/host-event.ts";
import type { Runtime } from "../wiring/runtime.ts";

/**
 * OpenCode 1's quirk, kept in its adapter: right after `session.compacting` it runs the messages transform on the
 * history it is about to summarize. That copy is the summarizer's input and gets no status note. Remembered from the
 * compacting hook to that transform; dropped when the summary is written or the session ends, so it never grows.
 */
export class Summarizing {
  readonly #ids = new Set<string>();

  begin(sessionId: string): void {
    this.#ids.add(sessionId);
  }

  /** Whether this transform of `sessionId` is the summarizer's input: true once per compaction. */
  take(sessionId: string): boolean {
    return this.#ids.delete(sessionId);
  }

  /** The summary is written (`compacted`), or the session errored, was aborted or deleted: no summarizer transform is to come. */
  onEvents(events: readonly HostEvent[]): void {
    if (this.#ids.size === 0) return;
    for (const e of events) if (e.type === "compacted" || e.type === "deleted" || e.type === "errored" || e.type === "aborted") this.#ids.delete(e.sessionId);
  }

  get size(): number {
    return this.#ids.size;
  }
}

/** OpenCode's own housekeeping prompts (title generator, compaction summarizer) are not agent steps: no prefix. */
function isHousekeeping(system: string[]): boolean {
  const first = system[0] ?? "";
  return first.includes("You are a title generator") || first.includes("You are a context summarization agent");
}

/** `experimental.chat.system.transform` → the model step's prefix (plugin/hooks/step-prefix.ts), appended to `system`. */
export async function systemTransform(rt: Runtime, input: { sessionID?: string }, output: { system: string[] }): Promise<void> {
  if (!input.sessionID || isHousekeeping(output.system)) return;
  const prefix = await prefixStep(rt, input.sessionID);
  if (prefix !== undefined) output.system.push(prefix);
}

/**
 * `experimental.chat.messages.transform` (input is `{}`; the session comes from the messages, its agent from the last
 * user message that names one) → the model step's notes (plugin/hooks/step-notes.ts), placed in this step's copy of
 * the messages, which OpenCode never persists: a parent's note on the last tool result, the status note as a
 * synthetic user message after the last one. OpenCode runs this transform for the summarizer's copy of the history
 * right after the compacting hook (`summarizing`): that copy gets no status note. Answers the session it prepared.
 */
export async function messagesTransform(rt: Runtime, output: { messages: Message[] }, summarizing?: Summarizing): Promise<string | undefined> {
  const messages = output.messages;
  const sessionId = messages.find((m) => m.info.sessionID)?.info.sessionID;
  if (!sessionId) return undefined;
  const agent = messages.findLast((m) => m.info.role === "user" && m.info.agent)?.info.agent ?? null;
  const step: ModelStep = { sessionId, agent, summarizing: summarizing?.take(sessionId) ?? false };
  const notes = await stepNotes(rt, step);
  if (notes.onToolResult) attachNotice(messages, notes.onToolResult, rt.ctx.clock.now());
  if (notes.statusNote) appendStatusMessage(messages, sessionId, notes.statusNote);
  return sessionId;
}

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
 * parent's `task` that came back "Task cancelled"), or to the last user message when there is none
 * (`NOTE_PLACEMENT` in plugin/hooks/step-notes.ts).
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

/** The status note as its own synthetic user message at the very end of this step's copy (never persisted). */
function appendStatusMessage(messages: Message[], sessionId: string, text: string): void {
  const id = "msg_governance_status";
  messages.push({
    info: { id, sessionID: sessionId, role: "user" },
    parts: [{ id: "prt_governance_status", sessionID: sessionId, messageID: id, type: "text", text, synthetic: true }],
  });
}
