import { noteAnswer } from "../../governance/session/handback.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";

/** What a finished answer text uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type AnswerDeps = { readonly runner: Pick<EffectRunner, "sessions" | "step"> };

/**
 * A session finished a piece of answer text (OpenCode 1's `experimental.text.complete`, OpenCode 2's
 * `session.text.ended` parsed into an `answer` host event): a subagent's last one is kept in its record, for its
 * parent's note if a stop or a budget ends it (issue 44 item 3). Roots and unchanged text cost nothing; a
 * subagent's costs one write per finished text part.
 */
export function answered(rt: AnswerDeps, sessionId: string, text: string): Promise<void> | undefined {
  if (!isSessionId(sessionId)) return;
  const known = rt.runner.sessions.peek(sessionId);
  if (!known || noteAnswer(known, text).next === known) return;
  return rt.runner.step(sessionId, (r) => noteAnswer(r, text)).then(() => undefined);
}
