import { isSessionId } from "../../governance/session/session-record.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * `chat.message`: a new user message in a session (a prompt typed in the TUI, sent over HTTP, or a parent's `task`).
 * It feeds the machine's `prompt` event, which applies the resume window (1 h resume, 48 h fresh start) on the next
 * prompt whatever process hosts the session and however long it has been up (issue 21).
 */
export async function chatMessage(rt: Runtime, input: { sessionID?: string; agent?: string }): Promise<void> {
  const id = input.sessionID;
  if (!id || !isSessionId(id)) return;
  await rt.tracker.ensureSeen(id, input.agent ?? null);
  await rt.runner.dispatch(id, { type: "prompt", at: rt.ctx.clock.now() });
}
