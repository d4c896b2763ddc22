import { audit, type AuditEffect } from "../session/effects.ts";
import type { RenderedNote } from "./delivery-plan.ts";

/** A notification the session's model must read, not yet carried by anything OpenCode persists. */
export type PendingNote = { directiveId: string; text: string };

export interface NotesOnStep {
  /** Notes still owed to the session after this step (the step's copy of the messages is never persisted). */
  pending: PendingNote[];
  /** Texts to attach to this step's copy, each exactly once. */
  show: string[];
  effects: AuditEffect[];
}

/**
 * "The parent hears it for good" (issue 21 item 6). A parent notification claimed on a model step
 * (`experimental.chat.messages.transform`) goes into that step's copy of the messages, which OpenCode never persists:
 * a retry, the next step or a compaction would lose it. So a note stays pending and is shown on every model step
 * until a tool result of the session carries it ({@link notesOnToolResult}: tool results are persisted in the
 * session's history). Each note appears once per request: pending notes are keyed by their directive id.
 */
export function notesOnStep(pending: readonly PendingNote[], claimed: readonly RenderedNote[]): NotesOnStep {
  const next = [...pending];
  const effects: AuditEffect[] = [];
  for (const n of claimed) {
    if (!n.rendered.ok) effects.push(audit("directive_rejected", { directiveId: n.directiveId, reason: n.rendered.reason }));
    else if (!next.some((p) => p.directiveId === n.directiveId)) next.push({ directiveId: n.directiveId, text: n.rendered.text });
  }
  return { pending: next, show: next.map((p) => p.text), effects };
}

/**
 * A tool result carries every pending note (first, before newly claimed ones) into the session's persisted history;
 * nothing is pending afterwards.
 */
export function notesOnToolResult(pending: readonly PendingNote[], claimed: readonly RenderedNote[]): { carry: RenderedNote[]; pending: PendingNote[] } {
  const fromPending: RenderedNote[] = pending.map((p) => ({ directiveId: p.directiveId, rendered: { ok: true, text: p.text } }));
  const fresh = claimed.filter((n) => !pending.some((p) => p.directiveId === n.directiveId));
  return { carry: [...fromPending, ...fresh], pending: [] };
}

/**
 * The turn ended (the host's idle) after model steps that showed these notes: the model read each on a request of
 * this turn and answered with it in front of it, so each is delivered now — its queue file is claimed (removed on
 * disk, so neither a later turn nor another OpenCode process hosting the session shows it again). Without this a
 * parent that answered without another tool call kept the note queued and got it again on every later step, then
 * pasted into an unrelated later tool result (walk 4, finding 2). A turn that errored before answering also ends
 * here: the note was in that request, and showing it again in later turns is the worse failure.
 */
export function notesAtTurnEnd(pending: readonly PendingNote[]): { delivered: string[]; pending: PendingNote[] } {
  return { delivered: pending.map((p) => p.directiveId), pending: [] };
}
