import { firstActionDue } from "../../governance/session/first-action.ts";
import { resumeContextDue } from "../../governance/session/session-machine.ts";
import { modelStaleWarnings } from "../../governance/session/stale-state.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { HostLine } from "../../governance/host/host-lines.ts";
import { buildPostCompactReminder } from "../../governance/texts/post-compact-reminder.ts";
import { buildResumeContext } from "../../governance/texts/resume-context.ts";
import { textTools } from "../../governance/host/host-lines.ts";
import { buildStatusNote } from "../../governance/texts/status-note.ts";
import { capSpentNote } from "../../governance/budget/spend-notices.ts";
import { takeNotifications } from "../stop/directive-delivery.ts";
import { interruptedWork } from "../sessions/descendants.ts";
import { hostNamed } from "../runtime/host-api.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionRuntime } from "../sessions/session-runtime.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { ResumeNotes } from "../sessions/resume-notes.ts";
import type { StopController } from "../stop/stop-controller.ts";
import type { SpendGuard } from "../budget/spend-guard.ts";

/** What a model step's notes uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type StepNotesDeps = {
  readonly ctx: Pick<PluginContext, "clock" | "config" | "viewOf" | "api" | "store">;
  readonly tracker: Pick<SessionTracker, "ensureSeen" | "orphanNotes">;
  readonly sessions: Pick<SessionRuntime, "peek">;
  /** Whole: the notes queued for the session are taken with both (plugin/stop/directive-delivery.ts). */
  readonly runner: EffectRunner;
  readonly stops: StopController;
  readonly budget: { readonly spend: Pick<SpendGuard, "check" | "spent"> };
  readonly resumeNotes: Pick<ResumeNotes, "textFor" | "forget">;
  readonly host: { readonly line: HostLine };
};

/**
 * Where a parent's note (a child stopped, finished, cut off) goes on a model step, decided HERE for both hosts:
 * - OpenCode 1: on the last tool result of the step's copy (the parent's `task` that came back "Task cancelled" is
 *   what the note is about, and the model reads results there), else on the last user message; never as assistant
 *   text, which the model would take for its own words.
 * - OpenCode 2: at the head of the status note. The `context` event's messages are the host's own `LLM.Message`
 *   objects, whose tool-result parts the release-line files read do not pin (docs/opencode-2.md); the status note is
 *   a message the adapter builds itself, after the last one, where the model reads it before it acts.
 * Either way the note stays queued until a tool result carries it or the turn that showed it ends (directive-delivery.ts
 * `takeNotifications`, `notesDeliveredAtTurnEnd`).
 */
export const NOTE_PLACEMENT: Readonly<Record<HostLine, "last_tool_result" | "status_note">> = { 1: "last_tool_result", 2: "status_note" };

/** A model step to prepare, in the plugin's own words: the session, its agent when the host says, and whether this
 * request is the summarizer's copy of the history (OpenCode 1 runs its messages transform for it: no status note). */
export type ModelStep = { sessionId: string; agent: string | null; summarizing?: boolean };

/** What the adapter adds to the step's request: a note for the last tool result, and the status note at the end. */
export type StepNotes = { onToolResult?: string; statusNote?: string };

/**
 * A model step to prepare, its moving part. Learns the session's agent, takes the notifications queued for this
 * session (e.g. "your subagent was stopped") that no tool result has carried yet, and builds the status note: the
 * governance text that can change between steps (resume context, post-compaction reminder until a turn completes
 * after the compaction (S2-R01), a missed first action, todos, stale-state warnings, orphans), which the adapter puts
 * after the last message. Nothing is added to a message a later step sends again without it, so each request repeats
 * the previous one up to this note and a provider's prompt cache holds (docs/decisions/0011-stable-system-prompt.md).
 */
export async function stepNotes(rt: StepNotesDeps, step: ModelStep): Promise<StepNotes> {
  const { ctx, tracker, runner, sessions } = rt;
  const { sessionId, agent } = step;
  await tracker.ensureSeen(sessionId, agent);
  const seen = sessions.peek(sessionId);
  // Soft (in memory, written behind): this runs before the session's first model request, which must not wait for a
  // durable write; the agent is written with the next durable change or within a second.
  if (agent && seen && seen.agent !== agent) await runner.dispatchSoft(sessionId, { type: "agent_learned", at: ctx.clock.now(), agent });

  const taken = await takeNotifications(runner, rt.stops, sessionId);
  const notice = taken.length > 0 ? taken.join("\n\n") : undefined;
  const current = step.summarizing ? undefined : sessions.peek(sessionId);
  // A root's step looks at the caps over time first: a new prompt after a cap was spent (here or in another OpenCode
  // process) is told so before it delegates.
  if (current && current.parentId === null) await rt.budget.spend.check(sessionId);
  const spent = current && current.parentId === null && rt.budget.spend.spent.length > 0 ? capSpentNote(rt.budget.spend.spent) : undefined;
  const note = current
    ? buildStatusNote({
        resume: resumeContextDue(current) ? await rt.resumeNotes.textFor(current, () => resumeText(rt, current)) : undefined,
        reminder: current.compactedPending ? reminderText(rt, current, agent) : undefined,
        todo: current.todo,
        orphans: tracker.orphanNotes(sessionId),
        stale: modelStaleWarnings(current, ctx.clock.now()),
        firstAction: firstActionDue(current),
        spent,
        tools: textTools(rt.host.line),
      })
    : undefined;
  if (current && !current.resume) rt.resumeNotes.forget(sessionId);
  if (NOTE_PLACEMENT[rt.host.line] === "last_tool_result") return { ...(notice ? { onToolResult: notice } : {}), ...(note ? { statusNote: note } : {}) };
  const joined = [notice, note || undefined].filter((t): t is string => t !== undefined).join("\n\n");
  return joined ? { statusNote: joined } : {};
}

/** S5 resume context of a resumed primary, built once per resume (it reads the descendants' records). */
async function resumeText(rt: StepNotesDeps, record: SessionRecord): Promise<string> {
  const resume = record.resume!;
  return buildResumeContext({
    idleMs: resume.idleMs,
    previousActivityAt: resume.previousActivityAt,
    previousState: resume.previousState,
    interrupted: resume.interrupted,
    // Each cut-off child's last tool call as the host names it ("last tool call `shell`" on OpenCode 2).
    interruptedWork: (await interruptedWork(rt.ctx, record)).map((w) => ({ ...w, lastToolCall: hostNamed(rt.ctx.api, w.lastToolCall) ?? null })),
    anchors: rt.ctx.config.anchors,
    todo: record.todo,
  });
}

function reminderText(rt: StepNotesDeps, record: SessionRecord, agent: string | null): string {
  const config = rt.ctx.config;
  return buildPostCompactReminder({
    language: config.language,
    phase: config.phase,
    recentActions: record.recentActions,
    anchors: config.anchors,
    who: rt.ctx.viewOf(record.agent ?? agent, record.depth),
  });
}
