import { randomBytes } from "node:crypto";
import { isSessionId, type SessionRecord } from "../session/session-record.ts";
import { stopOrigin } from "../session/stop-origin.ts";
import type { ControlContext, RequestResult } from "./control-requests.ts";
import { enqueue } from "./directive-queue.ts";
import * as z from "../zod.ts";
import { BudgetAmounts, BudgetKey } from "../config/budget-config.ts";
import { parseAmount } from "../config/budget-units.ts";

export type AmountsResult = { ok: true; add: BudgetAmounts } | { ok: false; reason: string };

/** `toolCalls=10`, `cost=1.5`, `activeTime=10m` … → validated amounts (same bounds as the config); a repeated key adds up. */
export function parseAmounts(items: readonly string[]): AmountsResult {
  const raw: Record<string, number> = {};
  for (const item of items) {
    const m = /^([A-Za-z]+)=(.{1,40})$/.exec(item.trim());
    if (!m) return { ok: false, reason: `--add takes key=value, e.g. toolCalls=20 or cost=1.50 (got ${JSON.stringify(item.slice(0, 60))})` };
    const [, key, value] = m as unknown as [string, string, string];
    if (!BudgetKey.safeParse(key).success) return { ok: false, reason: `unknown budget "${key}"; one of ${BudgetKey.options.join(", ")}` };
    const amount = parseAmount(key as BudgetKey, value);
    if (!amount.ok) return amount;
    raw[key] = (raw[key] ?? 0) + amount.n;
  }
  if (Object.keys(raw).length === 0) return { ok: false, reason: "nothing to add: use --add key=value" };
  const parsed = BudgetAmounts.safeParse(raw);
  return parsed.success ? { ok: true, add: parsed.data } : { ok: false, reason: z.prettifyError(parsed.error) };
}

/**
 * Why a raise for this session is refused, or null. A stop the user asked for (CLI, dashboard, a primary's stop tool)
 * is not undone by a raise — the plugin would apply it to a session that stays stopped, and the user would believe
 * the work goes on; governance's own stops (a budget, the loop guard) are what a raise is for.
 */
export function raiseRefusal(record: Pick<SessionRecord, "sessionId" | "control" | "stop">): string | null {
  if ((record.control !== "stopped" && record.control !== "stopping") || stopOrigin(record.stop) !== "user") return null;
  const by = record.stop?.requestedBy ? ` by ${record.stop.requestedBy}` : "";
  const what = record.control === "stopped" ? "was stopped" : "is being stopped";
  return `session ${record.sessionId} ${what}${by}; a budget raise does not undo a stop. To go on with its work, ask its parent agent to delegate it again, or start a new session`;
}

/**
 * Raises a session's (or, with `tree`, its task tree's) budget: a signed `budget` directive in the queue of the
 * session (or of the tree's root), applied by the plugin process that hosts it. A session governance stopped (its
 * budget, the loop guard) is accepted: a raise is how a budget stop is undone; one the user stopped is refused
 * ({@link raiseRefusal}), nothing queued.
 */
export async function requestRaise(ctx: ControlContext, target: string, opts: { tree: boolean; add: BudgetAmounts }): Promise<RequestResult> {
  if (!isSessionId(target)) return { ok: false, reason: `budget needs a session id (ses_…): ${JSON.stringify(String(target).slice(0, 80))}` };
  const record = await ctx.store.read(target);
  if (!record) return { ok: false, reason: `unknown session ${target}: no governance record in ${ctx.paths.sessions}` };
  const sessionId = opts.tree ? record.rootId : target;
  const raised = sessionId === target ? record : await ctx.store.read(sessionId);
  const refusal = raised ? raiseRefusal(raised) : null;
  if (refusal) return { ok: false, reason: refusal };
  const id = `raise-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  const scope = opts.tree ? "tree" : "session";
  const res = await enqueue(ctx.paths, sessionId, { kind: "budget", id, at: ctx.clock.now(), scope, add: opts.add, by: ctx.by.slice(0, 100) });
  if (!res.ok) return { ok: false, reason: res.reason };
  await ctx.audit.append("budget_raised", { sessionId, scope, add: opts.add, by: ctx.by, raiseId: id, stage: "requested" });
  const warnings = record.control === "completed" ? [`session ${target} has completed; the raise applies if it is continued`] : [];
  return { ok: true, sessionIds: [sessionId], warnings };
}
