import type { Effect } from "../../governance/session/effects.ts";
import { closeLinkOnExit, releaseOnExit } from "../../governance/session/process-exit.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import { notifyParent } from "./notify-parent.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { DirectiveInbox } from "./directive-inbox.ts";

/**
 * The exit side of issue 26 item 1: every session this process hosts is released with its final state
 * (governance/session/process-exit.ts), and the link of a child whose turn the exit cut off is closed on its parent.
 * Runs inside the exit's bounded flush (dispose or a signal), after the hook calls under way settled. No toasts (the
 * host is going away); a parent's note is queued on disk for the process that hosts the parent next.
 * Returns how many records it released.
 */
export async function releaseHosted(runner: EffectRunner, tracker: SessionTracker, inbox: DirectiveInbox): Promise<number> {
  const host = tracker.self;
  const at = runner.ctx.clock.now();
  let released = 0;
  const cutOff: { id: string; parentId: string }[] = [];
  for (const id of [...tracker.hosted()]) {
    // The answer came and the process exits before OpenCode's idle: the turn ended — record the idle OpenCode had no
    // time to send, so the exit does not call it cut off (decision 0052).
    const answered = tracker.isBusy(id) && tracker.answered(id);
    if (answered) await runner.dispatch(id, { type: "idle", at });
    const busy = tracker.isBusy(id) && !answered;
    const applied = await runner.sessions.step(id, (r) => releaseOnExit(r, host, at, { busy }));
    if (applied.next === applied.previous) continue;
    released++;
    await runQuietly(runner, inbox, id, applied.effects, applied.next);
    const next = applied.next;
    const ended = next && (next.state === "interrupted" || next.control === "stopped");
    if (ended && next.parentId) cutOff.push({ id, parentId: next.parentId });
  }
  for (const c of cutOff) {
    const applied = await runner.sessions.step(c.parentId, (p) => closeLinkOnExit(p, c.id, at));
    await runQuietly(runner, inbox, c.parentId, applied.effects, applied.next);
  }
  return released;
}

/** The effects of an exit step: audit lines and parent notes; nothing that talks to the host. */
async function runQuietly(
  runner: EffectRunner,
  inbox: DirectiveInbox,
  sessionId: string,
  effects: readonly Effect[],
  next: Parameters<typeof notifyParent>[3],
): Promise<void> {
  for (const e of effects) {
    try {
      if (e.type === "audit") await runner.ctx.record(e.event, { sessionId, ...e.data });
      else if (e.type === "notify_parent") await notifyParent(runner.ctx, inbox, sessionId, next, e, { toast: false });
    } catch (error) {
      runner.ctx.reportHookError(`exit:${e.type}`, error);
    }
  }
}
