import { linkChild } from "../../governance/session/child-links.ts";
import { endChildLink, endSession, errorEndsSession } from "../../governance/session/session-end.ts";
import { isSessionId, type SessionRecord } from "../../governance/session/session-record.ts";
import { retitle } from "../../governance/session/session-title.ts";
import { type HostEvent, TELEMETRY_ONLY } from "../runtime/host-event.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { CoverageWatch } from "../sessions/coverage-watch.ts";
import type { StopController } from "../stop/stop-controller.ts";
import type { BudgetGuard } from "../budget/budget-guard.ts";
import type { Telemetry } from "../telemetry/telemetry.ts";
import { answered } from "./answer.ts";
import { notesDeliveredAtTurnEnd } from "../stop/directive-delivery.ts";

/**
 * What a host event uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot
 * import wiring/). The widest of the hooks: it routes each event to the service that owns it.
 */
export type EventDeps = {
  readonly ctx: Pick<PluginContext, "clock" | "config" | "store" | "trust">;
  readonly tracker: Pick<SessionTracker, "created" | "ensureSeen" | "noteAnswered" | "noteWorking" | "setStatus" | "turnEnded">;
  /** Whole: a turn's end delivers the notes its steps showed with both (plugin/stop/directive-delivery.ts). */
  readonly runner: EffectRunner;
  readonly stops: StopController;
  readonly budget: Pick<BudgetGuard, "running" | "onCreated" | "onEnded" | "onMessageUse" | "onReportedUse" | "onStatus">;
  readonly coverage: Pick<CoverageWatch, "afterCreated" | "hostStep" | "hostTool">;
  readonly telemetry: Pick<Telemetry, "events">;
  /** Drops every in-memory trace of a deleted session (the composition root knows every holder). */
  forget(sessionId: string): void;
};

/**
 * One host event, whichever host reported it (each adapter's one parser: plugin/opencode-1/events.ts,
 * plugin/opencode-2/events.ts): session lifecycle. An idle only ends a turn (it comes after every turn); an abort is
 * the user's Escape (or the host's, `cause: "host"`); a compaction ends with `compacted`.
 *
 * A host sends a dozen events a model step (issue 31): the ones that only move memory (output, status, usage, an
 * unchanged title) are handled at once and answer `undefined`; only work that waits (a write, a stop) is a promise.
 */
function handleEvent(rt: EventDeps, event: HostEvent): Promise<void> | undefined {
  if (!isSessionId(event.sessionId)) return;
  // The answer is in before OpenCode's idle: an exit in between must not count the turn as cut off (decision 0052).
  if ("answered" in event && event.answered) rt.tracker.noteAnswered(event.sessionId);
  if (TELEMETRY_ONLY.has(event.type)) return;
  const id = event.sessionId;
  const { runner, tracker, stops } = rt;
  switch (event.type) {
    case "output":
      stops.onLife(id);
      // Every end of a `task` call releases its spawn reservation, whether or not a child was ever created (issue 26).
      if (event.toolEnded) rt.budget.running.callEnded(event.toolEnded);
      if (event.step) {
        rt.coverage.hostStep(id);
        tracker.noteWorking(id);
      }
      if (event.toolEnded) rt.coverage.hostTool(id, event.toolEnded);
      return;
    case "status":
      tracker.setStatus(id, event.status);
      runner.idle.onStatus(id, event.status);
      return rt.budget.onStatus(id, event.status);
    case "answer":
      stops.onLife(id);
      return answered(rt, id, event.text);
    case "message_usage":
      // One assistant message's own use: what makes the totals exact when no final session.updated comes (an abort).
      return rt.budget.onMessageUse(id, { id: event.messageId, tokens: event.tokens, cost: event.cost });
    case "usage":
      // Frequent (every change of the session's info): only sessions this process already knows, no I/O.
      return rt.budget.onReportedUse(id, { tokens: event.tokens, cost: event.cost });
    case "titled": {
      // Every `session.updated` carries the title: only a session this process knows, and only a change, is written.
      const known = runner.sessions.peek(id);
      if (!known || known.title === event.title) return;
      const at = rt.ctx.clock.now();
      if (retitle(known, event.title, at).next === known) return;
      return runner.step(id, (r) => retitle(r, event.title, at)).then(() => undefined);
    }
    default:
      return lifecycle(rt, id, event);
  }
}

/** The events that change what a session is: each written at once. */
async function lifecycle(rt: EventDeps, id: string, event: HostEvent): Promise<void> {
  const { runner, tracker, stops, ctx } = rt;
  const at = ctx.clock.now();
  if (event.type === "created") {
    await tracker.created(id, () => recordNewSession(rt, id, event.parentId, event.agent, event.title));
    rt.budget.onCreated(id, event.parentId, event.agent);
    await rt.coverage.afterCreated(id, event.parentId);
    return;
  }
  if (event.type === "deleted") {
    await endSessionWork(rt, id, "deleted", null);
    rt.forget(id);
    return;
  }
  await tracker.ensureSeen(id);
  switch (event.type) {
    case "aborted":
      rt.budget.onEnded(id);
      await runner.dispatch(id, { type: "aborted", at, ...(event.cause ? { cause: event.cause } : {}) });
      await stops.onAborted(id);
      return;
    case "errored": {
      const record = await runner.dispatch(id, { type: "errored", at, message: event.name });
      // A child's error ends its task: OpenCode returns the error to the parent and runs no `tool.execute.after`.
      if (errorEndsSession(record)) await endSessionWork(rt, id, "failed", event.name);
      return;
    }
    case "idle":
      await runner.dispatch(id, { type: "idle", at });
      tracker.turnEnded(id);
      await stops.onIdle(id);
      // The notes this turn's steps showed were read: delivered once, never shown in a later turn.
      await notesDeliveredAtTurnEnd(runner, stops, id);
      return;
    case "compacted":
      // An automatic compaction was already counted by the autocontinue hook: the machine keeps it once.
      await runner.dispatch(id, { type: "compacted", at, trigger: event.trigger ?? "summarize" });
      return;
    case "todos":
      await runner.dispatch(id, { type: "todo_updated", at, total: event.total, open: event.open });
      return;
  }
}

/**
 * The events one host event means, in order (`session.updated` is a usage and a title), handed to telemetry and
 * governance: telemetry's span starts before the first and ends after the last, whether the work waited or not.
 */
export function handleEvents(rt: EventDeps, events: readonly HostEvent[]): Promise<void> | undefined {
  if (events.length === 0) return;
  rt.telemetry.events(events, "start");
  let waiting = false;
  try {
    for (let i = 0; i < events.length; i++) {
      const work = handleEvent(rt, events[i]!);
      if (!work) continue;
      waiting = true;
      return finishEvents(rt, events, i + 1, work);
    }
  } finally {
    if (!waiting) rt.telemetry.events(events, "done");
  }
}

async function finishEvents(rt: EventDeps, events: readonly HostEvent[], from: number, work: Promise<void>): Promise<void> {
  try {
    await work;
    for (let i = from; i < events.length; i++) await handleEvent(rt, events[i]!);
  } finally {
    rt.telemetry.events(events, "done");
  }
}

/**
 * A session's work ended outside a `task` result (seed 002): its record and its parent's link say how, its queued
 * directives are done with, and this process forgets it. Only for sessions governance has a record of.
 */
async function endSessionWork(rt: EventDeps, id: string, how: "failed" | "deleted", detail: string | null): Promise<void> {
  const { ctx, runner } = rt;
  const at = ctx.clock.now();
  const { next } = await runner.step(id, (r) => endSession(r, how, at, detail));
  if (!next) return;
  if (next.parentId) await runner.step(next.parentId, (p) => endChildLink(p, id, how, at));
  await rt.stops.onEnded(id);
}

/** S1 for a new session; a child is linked on both sides (child names its parent, parent lists its child). */
async function recordNewSession(
  rt: EventDeps,
  id: string,
  parentId: string | null,
  agent: string | null,
  title: string | null,
): Promise<SessionRecord | undefined> {
  const { ctx, runner, tracker } = rt;
  const parent = parentId && isSessionId(parentId) ? ((await ctx.store.read(parentId)) ?? (await tracker.ensureSeen(parentId))) : undefined;
  const record = await runner.dispatch(id, {
    type: "created",
    at: ctx.clock.now(),
    parentId: parentId && isSessionId(parentId) ? parentId : null,
    agent,
    title,
    ...(parent ? { parentRecord: { depth: parent.depth, rootId: parent.rootId } } : {}),
    attest: ctx.trust.attest(id),
    phase: ctx.config.phase,
  });
  if (record && parent) {
    const child = { sessionId: id, agent, createdAt: record.createdAt, depth: record.depth };
    await runner.step(parent.sessionId, (p) => linkChild(p, child));
  }
  return record;
}
