import { isSessionId } from "../../governance/session/session-record.ts";
import type { Governor } from "../governor.ts";
import type { StopController } from "../stop-controller.ts";

/** How OpenCode's `task` result says a child ended, for the parent's bookkeeping. */
export function taskOutcome(output: string): "completed" | "aborted" | "failed" {
  const head = output.slice(0, 200);
  if (/^<task [^>]*state="(cancelled|aborted)"/.test(head) || head.startsWith("Task cancelled")) return "aborted";
  if (/^<task [^>]*state="(error|failed)"/.test(head)) return "failed";
  return "completed";
}

/**
 * `tool.execute.after`: closes a finished child's bookkeeping on the parent's `task` result (completion, failure and
 * abort alike), then lets the stop controller rewrite the output (stop ladder, injected guidance, notifications).
 */
export async function toolAfter(
  gov: Governor,
  stops: StopController,
  input: { tool: string; sessionID: string; callID: string },
  output: { title: string; output: string; metadata: any },
): Promise<void> {
  const sessionId = input.sessionID;
  await gov.ensureSeen(sessionId);
  if (input.tool === "task") {
    const childId = output.metadata?.sessionId;
    if (isSessionId(childId)) await gov.closeChild(sessionId, childId, taskOutcome(String(output.output ?? "")));
  }
  const note = gov.callNotes.get(input.callID);
  if (note !== undefined) {
    gov.callNotes.delete(input.callID);
    output.output = `${note}\n\n${String(output.output ?? "")}`;
  }
  const rewritten = await stops.onToolResult(sessionId, String(output.output ?? ""));
  if (rewritten !== undefined) output.output = rewritten;
}
