import { describe, expect, it } from "vitest";
import { BudgetAmounts, BudgetKey, BudgetLimits, PERIOD_KEYS, PeriodLimits } from "../../../governance/config/budget-config.ts";
import { BUDGET_KEYS, BUDGET_KINDS, keysOfUnit } from "../../../governance/config/budget-kinds.ts";
import { parseAmount } from "../../../governance/config/budget-units.ts";
import { prettifyError } from "../../../governance/zod.ts";

/**
 * The table of budget kinds is the one place a kind is declared (docs/decisions/0077-budget-kinds.md): the schemas
 * and the cap keys follow it (the dashboard's browser script: test/cli/dashboard-budget-units.test.ts).
 */
describe("budget kinds: one table", () => {
  it("the config's keys, a raise's keys and a cap's keys are the table's, in its order", () => {
    expect(BudgetKey.options).toEqual(BUDGET_KEYS);
    expect(Object.keys(BudgetLimits.shape)).toEqual(BUDGET_KEYS);
    expect(Object.keys(BudgetAmounts.shape)).toEqual(BUDGET_KEYS);
    expect(PERIOD_KEYS).toEqual(BUDGET_KEYS.filter((k) => BUDGET_KINDS[k].spend));
    expect(Object.keys(PeriodLimits.shape)).toEqual(PERIOD_KEYS);
    expect(keysOfUnit("ms")).toContain("activeTime");
  });

  it("every kind refuses a value above its bound with a message naming the key, in the config and in a raise", () => {
    for (const key of BUDGET_KEYS) {
      const tooMuch = BUDGET_KINDS[key].max * 2;
      for (const schema of [BudgetLimits, BudgetAmounts]) {
        const parsed = schema.safeParse({ [key]: tooMuch });
        expect(parsed.success, key).toBe(false);
        if (!parsed.success) expect(prettifyError(parsed.error)).toContain(key);
      }
    }
  });

  it("`--add` reads a duration kind as a duration and every other kind as a number", () => {
    expect(parseAmount("activeTime", "10m")).toEqual({ ok: true, n: 600_000 });
    expect(parseAmount("cost", "1.5")).toEqual({ ok: true, n: 1.5 });
    expect(parseAmount("toolCalls", "10m")).toEqual({ ok: false, reason: 'toolCalls: not a number: "10m"' });
  });
});
