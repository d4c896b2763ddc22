import { parseAmounts, requestRaise } from "../../governance/stop/budget-request.ts";
import { type BudgetUseLine, budgetView } from "../../governance/budget/budget-view.ts";
import type { BudgetAmounts, BudgetKey } from "../../governance/config/budget-config.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import { kindOf } from "../../governance/config/budget-kinds.ts";
import { formatAmount, formatDollars } from "../../governance/config/budget-units.ts";
import { readConfig } from "../read-config.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";
import { spendCommand } from "./spend.ts";

/**
 * `budget <session> [--tree] [--add key=value …] [--json]`: without `--add`, the session's (and, on a root, its
 * tree's) use against each budget; with it, a signed raise the plugin applies at once (a budget stop stands down).
 */
export async function budgetCommand(c: CommandContext): Promise<number> {
  if (c.options.project || c.options.user) return spendCommand(c);
  const target = c.args[0];
  if (!target || !isSessionId(target))
    return c.usage(
      "budget needs a session id (ses_…) or --project/--user: budget <session> [--tree] [--add toolCalls=20 …], budget --project [--week] [--add cost=5]",
    );
  const adds = c.options.add ?? [];
  if (adds.length > 0) {
    const amounts = parseAmounts(adds);
    if (!amounts.ok) return c.usage(amounts.reason);
    const res = await requestRaise(c.control, target, { tree: c.options.tree ?? false, add: amounts.add });
    if (c.options.json) {
      c.io.json(
        res.ok ? { version: JSON_VERSION, ok: true, sessionIds: res.sessionIds, add: amounts.add } : { version: JSON_VERSION, ok: false, reason: res.reason },
      );
      return res.ok ? 0 : 1;
    }
    if (!res.ok) {
      c.io.errLine(["red", "not raised: "], res.reason);
      return 1;
    }
    for (const w of res.warnings) c.io.errLine(["yellow", "warning: "], w);
    c.io.line(["green", `${c.options.tree ? "tree " : ""}budget raise queued for ${res.sessionIds.join(", ")}: ${addedText(amounts.add)}`]);
    return 0;
  }
  const record = await c.store.read(target);
  if (!record) {
    c.io.errLine(["red", "unknown session: "], target);
    return 1;
  }
  const config = await readConfig(c.store.paths.configFile);
  const view = budgetView(record, config.config, c.control.clock.now());
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, sessionId: target, budget: view });
    return 0;
  }
  c.io.line(`session ${target} (${record.agent ?? "?"})`);
  for (const l of view.session) c.io.line(`  ${formatLine(l)}`);
  if (view.tree) {
    c.io.line("task tree");
    for (const l of view.tree) c.io.line(`  ${formatLine(l)}`);
  }
  if (!view.costReported) c.io.line(["yellow", "cost: not reported by the provider (no model prices in the OpenCode config)"]);
  if (view.exceeded) {
    const { scope, key, used, limit } = view.exceeded;
    c.io.line(["red", `exceeded: ${scope} ${key} ${amount(key, used, limit)} of ${amount(key, limit, limit)}`]);
  }
  return 0;
}

/**
 * An amount as the rest of the CLI prints it: dollars, a duration for activeTime (`6s`, `12m`, `2h`, as `status` and
 * `sessions` show it — never milliseconds), an exact count otherwise.
 */
function amount(key: BudgetKey, value: number, limit: number | null): string {
  switch (kindOf(key).unit) {
    case "usd":
      return formatDollars(value, Math.min(limit ?? 0.0001, 0.0001));
    case "ms":
      return formatAmount(key, value);
    case "count":
      return String(value);
  }
}

function formatLine(l: BudgetUseLine): string {
  const limit = l.limit === null ? "" : ` of ${kindOf(l.key).unit === "usd" ? formatDollars(l.limit, l.limit) : amount(l.key, l.limit, l.limit)}`;
  return `${l.key.padEnd(17)} ${amount(l.key, l.used, l.limit)}${limit}${l.limit === null ? "" : ` (${Math.round((l.share ?? 0) * 100)}%)`}`;
}

/** `activeTime +10m, toolCalls +50`: what a raise adds, in the units it was typed in. */
function addedText(add: BudgetAmounts): string {
  return Object.entries(add)
    .map(([key, value]) => `${key} +${amount(key as BudgetKey, value as number, value as number)}`)
    .join(", ");
}
