import { resumeContextDue } from "../../governance/session/session-machine.ts";
import { buildGovernancePrefix } from "../../governance/texts/governance-prefix.ts";
import { buildResumeContext } from "../../governance/texts/resume-context.ts";
import { interruptedWork } from "../sessions/descendants.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** OpenCode's own housekeeping prompts (title generator, compaction summarizer) are not agent steps: no prefix. */
function isHousekeeping(system: string[]): boolean {
  const first = system[0] ?? "";
  return first.includes("You are a title generator") || first.includes("You are a context summarization agent");
}

/**
 * `experimental.chat.system.transform`: the governance prefix on EVERY model step of a governed session (the output
 * is rebuilt by OpenCode each step, so nothing is injected "once"). A resumed primary gets the resume context placed
 * before the prefix (S5-R01); a resumed subagent never does (S5-R08).
 */
export async function systemTransform(rt: Runtime, input: { sessionID?: string }, output: { system: string[] }): Promise<void> {
  const sessionId = input.sessionID;
  if (!sessionId || isHousekeeping(output.system)) return;
  const { ctx, tracker, runner } = rt;
  await tracker.ensureSeen(sessionId);
  const record = await runner.dispatch(sessionId, { type: "model_step", at: ctx.clock.now() }, { soft: true });
  if (!record) return;
  const config = ctx.config;
  const prefix = buildGovernancePrefix({
    who: ctx.viewOf(record.agent, record.depth),
    language: config.language,
    phase: config.phase,
    todo: record.todo,
    orphans: [...tracker.orphanNotes(sessionId)],
  });
  let text = prefix;
  if (resumeContextDue(record) && record.resume) {
    const resume = buildResumeContext({
      idleMs: record.resume.idleMs,
      previousActivityAt: record.resume.previousActivityAt,
      previousState: record.resume.previousState,
      interrupted: record.resume.interrupted,
      interruptedWork: await interruptedWork(ctx, record),
      anchors: config.anchors,
      todo: record.todo,
    });
    text = `${resume}\n\n${prefix}`;
  }
  output.system.push(text);
}
