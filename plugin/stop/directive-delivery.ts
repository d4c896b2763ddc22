import { claimAll, type Directive } from "../../governance/stop/directive-queue.ts";
import { renderNotification } from "../../governance/stop/notifications.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import { onToolResult } from "../../governance/stop/stop-ladder.ts";
import { validateInjectText } from "../../governance/texts/inject-sanitizer.ts";
import { buildInjectBlock, buildStopDirective } from "../../governance/texts/stop-directives.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";
import type { StopController } from "./stop-controller.ts";

/**
 * Directives reach a session with its tool results (`tool.execute.after`): returns the rewritten output, or undefined
 * to leave it. Stop wins over inject; all pending injects are delivered at once, in order; notifications for this
 * session (a child was stopped) come first.
 */
export async function deliverOnToolResult(runner: EffectRunner, stops: StopController, sessionId: string, output: string): Promise<string | undefined> {
  const { ctx, sessions, inbox } = runner;
  // take() answers "anything queued?" and clears it in one look: one lstat per tool result on the hot path.
  if (!inbox.take(sessionId) && sessions.peek(sessionId)?.control !== "stopping") return undefined;
  const directives = await claimAll(ctx.paths, sessionId, { clock: ctx.clock, onProblem: (p) => rejected(runner, sessionId, p) });
  for (const d of directives) if (d.kind === "stop") await stops.begin(sessionId, d);
  const notes = await renderNotes(runner, sessionId, directives);
  const injects = directives.flatMap((d) => (d.kind === "inject" ? [d] : []));

  let body: string | undefined;
  if (sessions.peek(sessionId)?.control === "stopping") {
    const at = ctx.clock.now();
    const { next, action } = await runner.step(sessionId, (r) => (r ? onToolResult(r, at) : { next: r, effects: [], action: { kind: "none" } as const }));
    if (action.kind === "deliver") {
      const level = action.level;
      body = buildStopDirective({ level, sessionId, reason: next?.stop?.reason ?? "", ...(level === 1 ? { originalOutput: output } : {}) });
    }
    if (injects.length > 0) await ctx.record("inject_dropped", { sessionId, count: injects.length, because: "stop wins over inject" });
  } else if (injects.length > 0) {
    // Validated again on delivery: a queue file may have been written by hand or by an older version.
    const checked = injects.map((d) => validateInjectText(d.text, { maxLength: ctx.config.inject.maxLength }));
    const texts = checked.filter((c) => c.valid).map((c) => c.sanitized);
    if (texts.length > 0) body = buildInjectBlock(texts) + output;
    for (const d of injects) await ctx.record("session_injected", { sessionId, injectId: d.id, preview: d.text.slice(0, 60), by: d.by });
  }
  if (notes.length === 0) return body;
  return `${notes.join("\n\n")}\n\n${body ?? output}`;
}

/** Notifications only (for the model-step path): stop and inject directives stay queued for tool results. */
export async function takeNotifications(runner: EffectRunner, sessionId: string): Promise<string[]> {
  if (!runner.inbox.has(sessionId)) return [];
  const notes = await claimAll(runner.ctx.paths, sessionId, { clock: runner.ctx.clock, kinds: ["notify"], onProblem: (p) => rejected(runner, sessionId, p) });
  return renderNotes(runner, sessionId, notes);
}

/** Each notification rendered from this process's own record of the child; one that does not check out is audited, not shown. */
async function renderNotes(runner: EffectRunner, sessionId: string, directives: readonly Directive[]): Promise<string[]> {
  const texts: string[] = [];
  for (const d of directives) {
    if (d.kind !== "notify") continue;
    const child = runner.sessions.peek(d.childId) ?? (await runner.ctx.store.read(d.childId));
    const note = renderNotification(d, sessionId, child);
    if (note.ok) texts.push(note.text);
    else await runner.ctx.record("directive_rejected", { sessionId, directiveId: d.id, reason: note.reason });
  }
  return texts;
}

/** A queue file that failed validation or its signature was set aside (quarantined): audited, never delivered. */
function rejected(runner: EffectRunner, sessionId: string, problem: StoreProblem): void {
  void runner.ctx.record("directive_rejected", { sessionId, file: problem.file, reason: problem.reason }).catch(() => undefined);
}
