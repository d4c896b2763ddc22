import { claimAll, type Directive, peekAll } from "../../governance/stop/directive-queue.ts";
import { type DeliveryInput, planDelivery, type RenderedNote } from "../../governance/stop/delivery-plan.ts";
import { notesAtTurnEnd, notesOnStep, notesOnToolResult } from "../../governance/stop/parent-notes.ts";
import { renderNotification } from "../../governance/stop/notifications.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import { hostNamed } from "../runtime/host-api.ts";
import type { StopController } from "./stop-controller.ts";

/** What `tool.execute.after` already has for this result: the spawn gate's note and the budget guards' notices. */
export type Carried = Pick<DeliveryInput, "spawnNote" | "notices">;

/**
 * Directives reach a session with its tool results (`tool.execute.after`): returns the rewritten output, or undefined
 * to leave it. This file only claims and renders; what the result carries, in which order, and what is dropped and
 * audited is `planDelivery` (governance/stop/delivery-plan.ts), also when no directive is queued.
 */
export async function deliverOnToolResult(
  runner: EffectRunner,
  stops: StopController,
  sessionId: string,
  output: string,
  carried: Carried = {},
): Promise<string | undefined> {
  const { ctx, sessions } = runner;
  // Nothing queued: only what the result already carries (no directive, so no time, seal or length is read).
  const only = () => planDelivery(sessions.peek(sessionId), { injects: [], notes: [], output, ...carried, at: 0, maxLength: 0, seal: "" }).output;
  // take() answers "anything queued?" and clears it in one look: one lstat per tool result on the hot path.
  const owed = stops.notes.has(sessionId);
  if (!stops.inbox.take(sessionId) && !owed && sessions.peek(sessionId)?.control !== "stopping") return only();
  const directives = await claimAll(ctx.paths, sessionId, { clock: ctx.clock, onProblem: (p) => rejected(runner, sessionId, p) });
  // A stop request a queue look already began is not begun again (one request, begun once).
  const fresh = stops.begun.unbegun(
    sessionId,
    directives.flatMap((d) => (d.kind === "stop" ? [d] : [])),
  );
  if (fresh.length > 0) await stops.begin(sessionId, fresh);
  for (const d of directives) if (d.kind === "budget") await stops.onBudgetRaise?.(sessionId, d);
  // Notes already shown on model steps come first; from here on the session's history carries them.
  const { carry: notes, pending } = notesOnToolResult(stops.notes.get(sessionId), await renderNotes(runner, sessionId, directives));
  stops.notes.set(sessionId, pending);
  const injects = directives.flatMap((d) => (d.kind === "inject" ? [d] : []));
  if (notes.length === 0 && injects.length === 0 && sessions.peek(sessionId)?.control !== "stopping") return only();
  const input = { injects, notes, output, ...carried, at: ctx.clock.now(), maxLength: ctx.config.inject.maxLength, seal: ctx.sealOf(sessionId) };
  if (sessions.peek(sessionId)?.control === "stopping") {
    // The ladder moves the record: planned inside the locked update.
    const { output: rewritten } = await runner.step(sessionId, (record) => planDelivery(record, input));
    return rewritten;
  }
  const record = sessions.peek(sessionId);
  const plan = planDelivery(record, input);
  await runner.run(sessionId, plan.effects, { next: record });
  return plan.output;
}

/**
 * Notifications for the model-step path (stop and inject directives stay queued for tool results): the notes queued
 * for the session, each once. They are read, not claimed (issue 26 item 3): a model step's copy of the messages is
 * never persisted, so a note stays in its queue file — on disk, for whichever process hosts the session next — until a
 * tool result carries it (`deliverOnToolResult` claims it then) or the turn that showed it ends
 * (`notesDeliveredAtTurnEnd`). `stops.notes` only remembers what is owed, so a
 * session with nothing queued costs no directory read.
 */
export async function takeNotifications(runner: EffectRunner, stops: StopController, sessionId: string): Promise<string[]> {
  const owed = stops.notes.get(sessionId);
  if (!stops.inbox.has(sessionId) && owed.length === 0) return [];
  const queued = (await peekAll(runner.ctx.paths, sessionId)).filter((d) => d.kind === "notify");
  const step = notesOnStep([], await renderNotes(runner, sessionId, queued));
  stops.notes.set(sessionId, step.pending);
  await runner.run(sessionId, step.effects);
  return step.show;
}

/**
 * The session's turn ended: the notes its model steps showed are delivered (governance/stop/parent-notes.ts
 * `notesAtTurnEnd`) and their queue files claimed, so no later step or tool result shows them again.
 */
export async function notesDeliveredAtTurnEnd(runner: EffectRunner, stops: StopController, sessionId: string): Promise<void> {
  if (!stops.notes.has(sessionId)) return;
  const { delivered, pending } = notesAtTurnEnd(stops.notes.get(sessionId));
  stops.notes.set(sessionId, pending);
  const { ctx } = runner;
  await claimAll(ctx.paths, sessionId, { clock: ctx.clock, ids: new Set(delivered), onProblem: (p) => rejected(runner, sessionId, p) });
}

/** Each notification rendered from this process's own record of the child. */
async function renderNotes(runner: EffectRunner, sessionId: string, directives: readonly Directive[]): Promise<RenderedNote[]> {
  const notes: RenderedNote[] = [];
  for (const d of directives) {
    if (d.kind !== "notify") continue;
    const record = runner.sessions.peek(d.childId) ?? (await runner.ctx.store.read(d.childId));
    // The child's last tool call as the host names it ("Its last tool call: `shell`" on OpenCode 2).
    const child = record ? { ...record, lastToolCall: hostNamed(runner.ctx.api, record.lastToolCall) ?? null } : record;
    notes.push({ directiveId: d.id, rendered: renderNotification(d, sessionId, child, runner.ctx.sealOf(sessionId)) });
  }
  return notes;
}

/** A queue file that failed validation or its signature was set aside (quarantined): audited, never delivered. */
function rejected(runner: EffectRunner, sessionId: string, problem: StoreProblem): void {
  void runner.ctx.record("directive_rejected", { sessionId, file: problem.file, reason: problem.reason }).catch(() => undefined);
}
