import { randomBytes } from "node:crypto";
import { PERIOD_KEYS, type PeriodKey } from "../../governance/config/budget-config.ts";
import { parseAmounts } from "../../governance/stop/budget-request.ts";
import { loadKey } from "../../governance/storage/directive-signing.ts";
import { projectLedgerDir, SpendLedger, userLedgerDir } from "../../governance/storage/spend-ledger.ts";
import { capUseLine } from "../../governance/budget/spend-notices.ts";
import { localTimeZone, spendWindow } from "../../governance/time/spend-window.ts";
import { readConfig } from "../read-config.ts";
import { readSpend } from "../spend-view.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

/**
 * `budget --project|--user [--week] [--add key=value …] [--json]` (issue 44): today's and this week's spend against
 * the caps over time; with `--add`, a raise of today's cap (`--week`: this week's), a line signed with the user's key
 * in the scope's ledger. Every OpenCode process sees it at its next check: a spent cap comes back under, new
 * subagents may run again.
 */
export async function spendCommand(c: CommandContext): Promise<number> {
  if (c.options.project && c.options.user) return c.usage("budget takes --project or --user, not both");
  const scope = c.options.project ? "project" : "user";
  const adds = c.options.add ?? [];
  if (adds.length > 0) return raise(c, scope, adds);
  const config = await readConfig(c.store.paths.configFile);
  const view = readSpend(c.dir, config.config, c.control.clock.now());
  const caps = view.caps.filter((x) => x.cap.startsWith(`${scope}.`));
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, scope, day: view.window.day, week: view.window.week, timeZone: view.timeZone, caps });
    return 0;
  }
  c.io.line(["bold", `${scope === "project" ? "project" : "you (all projects)"}: `], `${view.window.day}, week ${view.window.week} (${view.timeZone})`);
  for (const cap of caps) c.io.line(`  ${capUseLine(cap)}`);
  return 0;
}

async function raise(c: CommandContext, scope: "project" | "user", adds: readonly string[]): Promise<number> {
  const amounts = parseAmounts(adds);
  if (!amounts.ok) return c.usage(amounts.reason);
  const wrong = Object.keys(amounts.add).filter((k) => !PERIOD_KEYS.includes(k as PeriodKey));
  if (wrong.length > 0) return c.usage(`a cap over time has no ${wrong.join(", ")}; one of ${PERIOD_KEYS.join(", ")}`);
  const key = loadKey();
  if (!key.ok) {
    c.io.errLine(["red", "not raised: "], key.reason);
    return 1;
  }
  const period = c.options.week ? "weekly" : "daily";
  const at = c.control.clock.now();
  const window = spendWindow(at, localTimeZone());
  const ledger = new SpendLedger(scope === "project" ? projectLedgerDir(c.dir) : userLedgerDir(), key.key, "cli");
  const id = `raise-${randomBytes(8).toString("hex")}`;
  ledger.raise(window.day, at, { id, period, add: amounts.add as Record<string, number>, by: "cli" });
  await c.audit.append("budget_raised", {
    scope: `${scope}.${period}`,
    add: amounts.add,
    raiseId: id,
    by: "cli",
    window: period === "daily" ? window.day : window.week,
  });
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, ok: true, scope: `${scope}.${period}`, add: amounts.add, raiseId: id });
    return 0;
  }
  const added = Object.entries(amounts.add)
    .map(([k, v]) => `${k} +${v}`)
    .join(", ");
  c.io.line(["green", `${scope}'s ${period === "daily" ? "cap for today" : "cap for this week"} raised: ${added}`]);
  return 0;
}
