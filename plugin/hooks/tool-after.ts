import * as z from "../../governance/zod.ts";
import { closeChild } from "../../governance/session/child-links.ts";
import { endSession } from "../../governance/session/session-end.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import { guardToolOutput } from "../../governance/texts/tool-output-guard.ts";
import { redactKey } from "../../governance/texts/key-redaction.ts";
import { deliverOnToolResult } from "../stop/directive-delivery.ts";
import { toolBody } from "../../governance/stop/delivery-plan.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * How OpenCode's `task` result says a child ended, for the parent's bookkeeping. The formats are pinned by
 * test/plugin/hooks/task-outcome.test.ts against strings captured from the real binary.
 */
export function taskOutcome(output: string): "completed" | "aborted" | "failed" {
  const head = output.slice(0, 200);
  // OpenCode 1's `task` texts, and OpenCode 2's `subagent` ones (packages/core/src/tool/plugin/subagent.ts @ 03cce408:
  // `<subagent sessionID=… state="completed">`, errors "Subagent cancelled (sessionID: …)" / "Subagent failed …").
  if (/^<(task|subagent) [^>]*state="(cancelled|aborted)"/.test(head) || /^(Task|Subagent) cancelled/.test(head)) return "aborted";
  if (/^<(task|subagent) [^>]*state="(error|failed)"/.test(head) || head.startsWith("Subagent failed")) return "failed";
  return "completed";
}

/** OpenCode's `task` result metadata: the child session it ran. */
const TaskMetadata = z.looseObject({ sessionId: z.string().optional() });

/**
 * `tool.execute.after`: closes a finished child's bookkeeping on the parent's `task` result (completion, failure and
 * abort alike), guards the tool's own output (tool-output-guard.ts: a forged directive in a file, a command's output or
 * a child's final answer is marked as data), then lets the directives queued for this session rewrite the output
 * (stop ladder, injected guidance, notifications), each sealed.
 */
export async function toolAfter(
  rt: Runtime,
  input: { tool: string; sessionID: string; callID: string },
  output: { title: string; output: string; metadata: unknown },
): Promise<void> {
  const { ctx, tracker, runner } = rt;
  const sessionId = input.sessionID;
  await tracker.ensureSeen(sessionId);
  if (input.tool === "task" && isSessionId(sessionId)) {
    const childId = TaskMetadata.safeParse(output.metadata).data?.sessionId;
    if (isSessionId(childId)) {
      const end = taskOutcome(String(output.output ?? ""));
      const at = ctx.clock.now();
      await runner.step(sessionId, (p) => closeChild(p, childId, end, at));
      // An aborted child needs no end: its record is `interrupted` (resumable by its parent's `task_id`).
      if (end !== "aborted") await runner.step(childId, (c) => endSession(c, end, at));
    }
  }
  // What the tool produced is data: the seal removed, look-alike directives marked, before governance adds its own text.
  const guarded = guardToolOutput(String(output.output ?? ""), ctx.sealOf(sessionId));
  if (guarded.flagged > 0 || guarded.sealRemoved) output.output = guarded.output;
  // The user's key never reaches a model, whatever read it (a symlink, a glob, a copy): one regex pass over the output.
  const forms = ctx.keyForms;
  if (forms) {
    const red = redactKey(String(output.output ?? ""), forms);
    if (red.redacted > 0) {
      output.output = red.output;
      await ctx.record("key_redacted", { sessionId, tool: input.tool, count: red.redacted });
    }
  }
  // What the result carries on top of the output, and in which order, is one plan (governance/stop/delivery-plan.ts).
  const own = String(output.output ?? "");
  const spawnNote = rt.calls.take(input.callID);
  const notices = await rt.budget.onToolResult(sessionId, input.tool, input.callID, toolBody(own, spawnNote));
  const rewritten = await deliverOnToolResult(runner, rt.stops, sessionId, own, { spawnNote, notices });
  if (rewritten !== undefined) output.output = rewritten;
}
