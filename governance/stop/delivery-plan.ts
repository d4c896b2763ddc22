import { audit, type Effect } from "../session/effects.ts";
import type { SessionRecord } from "../session/session-record.ts";
import { validateInjectText } from "../texts/inject-sanitizer.ts";
import { buildInjectBlock, buildStopDirective, guidanceSource } from "../texts/stop-directives.ts";
import { stopOrigin } from "../session/stop-origin.ts";
import type { InjectDirective } from "./directive-queue.ts";
import type { NotificationText } from "./notifications.ts";
import { onToolResult } from "./stop-ladder.ts";

/** What the budget guards put on a tool result (plugin/budget/budget-guard.ts `onToolResult`). */
export interface BudgetNotices {
  /** "You may go on": a raise stood this session's budget stop down. */
  standDown: string | null;
  /** Budgets past their warning threshold since the last tool result. */
  budget: readonly string[];
  /** The loop guard's notice on this very result. */
  loop: string | null;
}

export const NO_NOTICES: BudgetNotices = { standDown: null, budget: [], loop: null };

/** A `notify` directive as the receiving process rendered it (from its own record of the child). */
export type RenderedNote = { directiveId: string; rendered: NotificationText };

export interface DeliveryInput {
  /** Guidance claimed from the queue, FIFO. */
  injects: readonly InjectDirective[];
  /** Parent notifications claimed for this session, rendered, plus those still waiting to be carried by a tool result. */
  notes: readonly RenderedNote[];
  /** The tool's own output (guarded, the key redacted). */
  output: string;
  /** The spawn gate's note on this `task` call (log-only mode: what enforcement would have refused), if any. */
  spawnNote?: string | undefined;
  /** What the budget guards say on this result. */
  notices?: BudgetNotices;
  at: number;
  /** Config `inject.maxLength`: guidance is validated again on delivery (a queue file may be older or hand-written). */
  maxLength: number;
  /** The receiving session's seal (texts/directive-seal.ts): on the first line of every directive delivered. */
  seal: string;
}

export interface DeliveryPlan {
  next: SessionRecord | undefined;
  /** Audit lines (and, with a stop level delivered, the ladder's effects), in order. */
  effects: Effect[];
  /** The rewritten tool output; undefined leaves the tool output as it is. */
  output: string | undefined;
}

/** The tool's output as the session reads it below governance's texts: the spawn note first, then the output. */
export function toolBody(output: string, spawnNote: string | undefined): string {
  return spawnNote === undefined ? output : `${spawnNote}\n\n${output}`;
}

/**
 * What one tool result of a session carries, and in which order (seed 000 delivery; issue 29: the one plan).
 * Top to bottom: the budget guards' notices (stand-down, budget warnings, loop notice), parent notifications, then
 * the stop level's directive (L1 embeds the body, L2/L3 replace it) or the injected guidance above the body, the body
 * being the spawn note above the tool's own output. Rules, in order:
 * `record` is the session's (read inside the store's locked update when it is stopping: the ladder moves it).
 * 1. Notifications come first ("your subagent was stopped"): the parent must read them before anything else. One
 *    that does not check out (not its child, no record) is audited `directive_rejected`, never shown.
 * 2. Stop wins over inject: a `stopping` session gets the next ladder level (`onToolResult`) and no guidance; the
 *    dropped guidance is audited `inject_dropped` with its ids and why.
 * 3. Otherwise all pending guidance is delivered at once, in order, each text validated again; guidance that no
 *    longer validates is audited `inject_dropped` (with the sanitizer's reasons), never `session_injected`.
 * 4. The budget guards' notices go on top of everything: a session must read that it is over budget, looping, or
 *    free to go on again before what it asked for.
 * `output` is undefined when the result carries nothing of governance's (the tool's output stays as it is).
 */
export function planDelivery(record: SessionRecord | undefined, input: DeliveryInput): DeliveryPlan {
  const { injects, at } = input;
  const original = toolBody(input.output, input.spawnNote);
  const effects: Effect[] = [];
  const notes: string[] = [];
  for (const n of input.notes) {
    if (n.rendered.ok) notes.push(n.rendered.text);
    else effects.push(audit("directive_rejected", { directiveId: n.directiveId, reason: n.rendered.reason }));
  }

  let next = record;
  let body: string | undefined;
  if (record?.control === "stopping") {
    const step = onToolResult(record, at);
    next = step.next;
    effects.push(...step.effects);
    if (step.action.kind === "deliver") {
      const level = step.action.level;
      body = buildStopDirective({
        seal: input.seal,
        level,
        sessionId: record.sessionId,
        reason: step.next.stop?.reason ?? "",
        origin: stopOrigin(step.next.stop ?? record.stop),
        root: record.parentId === null,
        ...(level === 1 ? { originalOutput: original } : {}),
      });
    }
    if (injects.length > 0) {
      effects.push(audit("inject_dropped", { count: injects.length, injectIds: injects.map((d) => d.id), because: "stop wins over inject" }));
    }
  } else if (injects.length > 0) {
    const texts: string[] = [];
    const relayed = new Map<string, string[]>();
    for (const d of injects) {
      const checked = validateInjectText(d.text, { maxLength: input.maxLength });
      if (checked.valid) {
        const from = guidanceSource(d.by);
        if ("user" in from) texts.push(checked.sanitized);
        else relayed.set(from.agent, [...(relayed.get(from.agent) ?? []), checked.sanitized]);
        effects.push(audit("session_injected", { injectId: d.id, preview: checked.sanitized.slice(0, 60), by: d.by }));
      } else {
        effects.push(audit("inject_dropped", { count: 1, injectIds: [d.id], because: checked.warnings.join("; ") || "nothing visible left after sanitizing" }));
      }
    }
    // The user's guidance and an agent's are never one block: an agent's is never shown as the user's.
    const blocks = [buildInjectBlock(texts, input.seal), ...[...relayed].map(([agent, t]) => buildInjectBlock(t, input.seal, { agent }))].join("");
    if (blocks.length > 0) body = blocks + original;
  }
  const n = input.notices ?? NO_NOTICES;
  const top = [...(n.standDown === null ? [] : [n.standDown]), ...n.budget, ...(n.loop === null ? [] : [n.loop]), ...notes];
  if (top.length === 0) return { next, effects, output: body ?? (input.spawnNote === undefined ? undefined : original) };
  return { next, effects, output: `${top.join("\n\n")}\n\n${body ?? original}` };
}
