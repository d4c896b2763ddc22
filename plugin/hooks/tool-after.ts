import { closeChild } from "../../governance/session/child-links.ts";
import { endSession } from "../../governance/session/session-end.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import { guardToolOutput } from "../../governance/texts/tool-output-guard.ts";
import { redactKey } from "../../governance/texts/key-redaction.ts";
import { deliverOnToolResult } from "../stop/directive-delivery.ts";
import { toolBody } from "../../governance/stop/delivery-plan.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { CallNotes } from "../sessions/call-notes.ts";
import type { StopController } from "../stop/stop-controller.ts";
import type { BudgetGuard } from "../budget/budget-guard.ts";

/** What a tool result uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type ToolResultDeps = {
  readonly ctx: Pick<PluginContext, "clock" | "sealOf" | "keyForms" | "record">;
  readonly tracker: Pick<SessionTracker, "ensureSeen">;
  /** Whole: delivery (plugin/stop/directive-delivery.ts) claims, renders and steps with both. */
  readonly runner: EffectRunner;
  readonly stops: StopController;
  readonly calls: Pick<CallNotes, "take">;
  readonly budget: Pick<BudgetGuard, "onToolResult">;
};

/** How a delegation's result says its child ended (each adapter reads its host's texts: `taskOutcome`). */
export type ChildOutcome = "completed" | "aborted" | "failed";

/**
 * A finished tool call, in the plugin's own words; each adapter builds it from its host's hook (plugin/opencode-1/
 * tool-calls.ts, plugin/opencode-2/tool-calls.ts). `tool` is the core's name; `output` what the model will read;
 * `child` the child session a delegation ran and how it ended, when the host names it (a background child still
 * running is not named: its link stays open).
 */
export type ToolResult = {
  sessionId: string;
  callId: string;
  tool: string;
  output: string;
  child?: { sessionId: string; outcome: ChildOutcome };
};

/**
 * A tool result to carry directives: closes a finished child's bookkeeping on the parent's delegation result
 * (completion, failure and abort alike), guards the tool's own output (tool-output-guard.ts: a forged directive in a
 * file, a command's output or a child's final answer is marked as data), then lets the directives queued for this
 * session rewrite the output (stop ladder, injected guidance, notifications), each sealed. Answers the output the
 * model reads; the adapter writes it back into its host's result.
 */
export async function carryDirectives(rt: ToolResultDeps, result: ToolResult): Promise<string> {
  const { ctx, tracker, runner } = rt;
  const { sessionId, callId, tool, child } = result;
  let output = result.output;
  await tracker.ensureSeen(sessionId);
  if (child && isSessionId(sessionId) && isSessionId(child.sessionId)) {
    const at = ctx.clock.now();
    const childId = child.sessionId;
    await runner.step(sessionId, (p) => closeChild(p, childId, child.outcome, at));
    // An aborted child needs no end: its record is `interrupted` (resumable by its parent's `task_id`).
    if (child.outcome !== "aborted") await runner.step(childId, (c) => endSession(c, child.outcome as "completed" | "failed", at));
  }
  // What the tool produced is data: the seal removed, look-alike directives marked, before governance adds its own text.
  const guarded = guardToolOutput(output, ctx.sealOf(sessionId));
  if (guarded.flagged > 0 || guarded.sealRemoved) output = guarded.output;
  // The user's key never reaches a model, whatever read it (a symlink, a glob, a copy): one regex pass over the output.
  const forms = ctx.keyForms;
  if (forms) {
    const red = redactKey(output, forms);
    if (red.redacted > 0) {
      output = red.output;
      await ctx.record("key_redacted", { sessionId, tool, count: red.redacted });
    }
  }
  // What the result carries on top of the output, and in which order, is one plan (governance/stop/delivery-plan.ts).
  const spawnNote = rt.calls.take(callId);
  const notices = await rt.budget.onToolResult(sessionId, tool, callId, toolBody(output, spawnNote));
  const rewritten = await deliverOnToolResult(runner, rt.stops, sessionId, output, { spawnNote, notices });
  if (rewritten !== undefined) output = rewritten;
  return output;
}
