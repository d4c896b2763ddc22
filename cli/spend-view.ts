import { type CapInput, capInputs, type ScopeSums, windowDays } from "../governance/budget/spend-caps.ts";
import type { GovernanceConfig } from "../governance/config/config.ts";
import { loadKey } from "../governance/storage/directive-signing.ts";
import { projectLedgerDir, SpendLedger, userLedgerDir } from "../governance/storage/spend-ledger.ts";
import { localTimeZone, type SpendWindow, spendWindow } from "../governance/time/spend-window.ts";

/** Today's and this week's spend of the project and of the user against their caps (issue 44), as the ledgers hold it. */
export type SpendView = { window: SpendWindow; timeZone: string; caps: CapInput[] };

/** Reads both ledgers (every OpenCode process's files) for `status`, `budget --project|--user` and the dashboard. */
export function readSpend(projectDir: string, config: Pick<GovernanceConfig, "budgets">, at: number, env: NodeJS.ProcessEnv = process.env): SpendView {
  const timeZone = localTimeZone();
  const window = spendWindow(at, timeZone);
  const days = windowDays(window);
  const key = loadKey(env);
  const sums = (dir: string): ScopeSums => {
    const ledger = new SpendLedger(dir, key.ok ? key.key : null);
    const week = ledger.sum(days);
    return { today: ledger.sum([window.day]).use, week: week.use, raises: week.raises };
  };
  return { window, timeZone, caps: capInputs(config, window, { project: sums(projectLedgerDir(projectDir)), user: sums(userLedgerDir(env)) }) };
}
