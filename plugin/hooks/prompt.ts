import { isSessionId } from "../../governance/session/session-record.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";

/** What an admitted prompt uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type PromptDeps = {
  readonly ctx: Pick<PluginContext, "clock">;
  readonly tracker: Pick<SessionTracker, "ensureSeen">;
  readonly runner: Pick<EffectRunner, "dispatch">;
};

/**
 * A prompt admitted to a session (a prompt typed in the TUI, sent over HTTP, or a parent's delegation; OpenCode 1
 * `chat.message`, OpenCode 2 `session.hook("prompt")`).
 * It feeds the machine's `prompt` event, which applies the resume window (1 h resume, 48 h fresh start) on the next
 * prompt whatever process hosts the session and however long it has been up (issue 21).
 */
export async function promptAdmitted(rt: PromptDeps, sessionId: string | undefined, agent: string | null = null): Promise<void> {
  const id = sessionId;
  if (!id || !isSessionId(id)) return;
  await rt.tracker.ensureSeen(id, agent);
  await rt.runner.dispatch(id, { type: "prompt", at: rt.ctx.clock.now() });
}
