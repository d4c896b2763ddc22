import { randomBytes } from "node:crypto";
import { isSessionId } from "../session/session-record.ts";
import type { ControlContext, RequestResult } from "./control-requests.ts";
import { enqueue } from "./directive-queue.ts";
import { parseDuration } from "../time/time-format.ts";
import * as z from "../zod.ts";
import { BudgetAmounts, BudgetKey } from "../config/budget-config.ts";

export type AmountsResult = { ok: true; add: BudgetAmounts } | { ok: false; reason: string };

/** `toolCalls=10`, `cost=1.5`, `activeTime=10m` … → validated amounts (same bounds as the config); a repeated key adds up. */
export function parseAmounts(items: readonly string[]): AmountsResult {
  const raw: Record<string, number> = {};
  for (const item of items) {
    const m = /^([A-Za-z]+)=(.{1,40})$/.exec(item.trim());
    if (!m) return { ok: false, reason: `--add takes key=value, e.g. toolCalls=20 or cost=1.50 (got ${JSON.stringify(item.slice(0, 60))})` };
    const [, key, value] = m as unknown as [string, string, string];
    if (!BudgetKey.safeParse(key).success) return { ok: false, reason: `unknown budget "${key}"; one of ${BudgetKey.options.join(", ")}` };
    if (key === "activeTime") {
      const d = parseDuration(value);
      if (!d.ok) return { ok: false, reason: `activeTime: ${d.reason}` };
      raw[key] = (raw[key] ?? 0) + d.ms;
    } else {
      const n = Number(value);
      if (!Number.isFinite(n)) return { ok: false, reason: `${key}: not a number: ${JSON.stringify(value)}` };
      raw[key] = (raw[key] ?? 0) + n;
    }
  }
  if (Object.keys(raw).length === 0) return { ok: false, reason: "nothing to add: use --add key=value" };
  const parsed = BudgetAmounts.safeParse(raw);
  return parsed.success ? { ok: true, add: parsed.data } : { ok: false, reason: z.prettifyError(parsed.error) };
}

/**
 * Raises a session's (or, with `tree`, its task tree's) budget: a signed `budget` directive in the queue of the
 * session (or of the tree's root), applied by the plugin process that hosts it. A stopped session is accepted: a
 * raise is how a budget stop is undone.
 */
export async function requestRaise(ctx: ControlContext, target: string, opts: { tree: boolean; add: BudgetAmounts }): Promise<RequestResult> {
  if (!isSessionId(target)) return { ok: false, reason: `budget needs a session id (ses_…): ${JSON.stringify(String(target).slice(0, 80))}` };
  const record = await ctx.store.read(target);
  if (!record) return { ok: false, reason: `unknown session ${target}: no governance record in ${ctx.paths.sessions}` };
  const sessionId = opts.tree ? record.rootId : target;
  const id = `raise-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
  const scope = opts.tree ? "tree" : "session";
  const res = await enqueue(ctx.paths, sessionId, { kind: "budget", id, at: ctx.clock.now(), scope, add: opts.add, by: ctx.by.slice(0, 100) });
  if (!res.ok) return { ok: false, reason: res.reason };
  await ctx.audit.append("budget_raised", { sessionId, scope, add: opts.add, by: ctx.by, raiseId: id, stage: "requested" });
  const warnings = record.control === "completed" ? [`session ${target} has completed; the raise applies if it is continued`] : [];
  return { ok: true, sessionIds: [sessionId], warnings };
}
