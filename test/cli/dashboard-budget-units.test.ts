import { describe, expect, it } from "vitest";
import { DASHBOARD_SCRIPT } from "../../cli/dashboard-page.ts";
import { BUDGET_KEYS, unitsByKey } from "../../governance/config/budget-kinds.ts";
import { formatAmount } from "../../governance/config/budget-units.ts";

/** The dashboard's browser script formats a budget figure by its kind's unit, given as data from the kinds table (decision 0077). */
describe("dashboard: budget figures by the table's units", () => {
  it("the dashboard's browser script gets each key's unit from the table and formats as the server does", () => {
    const units = /const BUDGET_UNITS = (\{[^\n]*\});/.exec(DASHBOARD_SCRIPT)?.[1];
    expect(JSON.parse(units ?? "null")).toEqual(unitsByKey());
    const source = /function amount\(key, v, setWith\) \{[\s\S]*?\n\}/.exec(DASHBOARD_SCRIPT)?.[0] ?? "";
    // The browser's formatter may only ask for a unit: a kind named in it would be a second table.
    for (const key of BUDGET_KEYS) expect(source).not.toContain(`"${key}"`);
    const amount = new Function("BUDGET_UNITS", `${source}; return amount;`)(unitsByKey()) as (k: string, v: number, s?: number) => string;
    const values = [0, 7, 59_000, 600_000, 9_000_000, 12_345, 2_500_000];
    for (const key of BUDGET_KEYS) {
      for (const v of values) expect(amount(key, v, v), `${key} ${v}`).toBe(formatAmount(key, v, v));
      expect(amount(key, 0.001, 0.001)).toBe(formatAmount(key, 0.001, 0.001));
    }
  });
});
