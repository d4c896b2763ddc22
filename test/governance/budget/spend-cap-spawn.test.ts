import { describe, expect, it } from "vitest";
import { capResetDay, decideCapSpawn } from "../../../governance/budget/spend-caps.ts";
import type { CapLine } from "../../../governance/budget/spend-notices.ts";

/** While a cap over time is spent, the spawn gate refuses a new subagent (issue 44): the rule the gate asks. */

const window = { day: "2026-11-28", week: "2026-W48" }; // a Saturday
const spentDaily: CapLine = { cap: "project.daily", key: "cost", used: 20.4, limit: 20 };

describe("decideCapSpawn", () => {
  it("lets a spawn through while no cap is spent", () => {
    expect(decideCapSpawn({ spent: [], window, timeZone: "Europe/Berlin", targetAgent: "builder" })).toEqual({ ok: true });
  });

  it("refuses while a cap is spent, with which cap, how much, when it resets and the user's command", () => {
    const d = decideCapSpawn({ spent: [spentDaily], window, timeZone: "Europe/Berlin", targetAgent: "builder" });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("SPAWN REFUSED");
    expect(d.message).toContain('Subagent "builder" was not started');
    expect(d.message).toContain("the project's daily cap is spent ($20.40 of $20.00 cost used)");
    expect(d.message).toContain("It resets at midnight (2026-11-29 00:00, Europe/Berlin)");
    expect(d.message).toContain("`opencode-governance budget --project --add cost=…`");
    expect(d.message).toContain("Do not retry the spawn");
    expect(d.effects[0]).toEqual({
      type: "audit",
      event: "spawn_refused_budget",
      data: { scope: "project.daily", key: "cost", used: 20.4, limit: 20, window: "2026-11-28", targetAgent: "builder" },
    });
    expect(d.effects[1]).toMatchObject({ type: "toast", variant: "warning" });
  });

  it("names a weekly user cap with its week, the Monday it resets on and --user --week", () => {
    const line: CapLine = { cap: "user.weekly", key: "modelRequests", used: 50, limit: 50 };
    const d = decideCapSpawn({ spent: [line], window, timeZone: "UTC", targetAgent: "scout" });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("the user's weekly cap (all projects) is spent");
    expect(d.message).toContain("resets on Monday (2026-11-30 00:00, UTC)");
    expect(d.message).toContain("`opencode-governance budget --user --week --add modelRequests=…`");
    expect(d.effects[0]).toMatchObject({ data: { scope: "user.weekly", window: "2026-W48" } });
  });
});

describe("capResetDay", () => {
  it("is tomorrow for a day, the Monday after for a week, across a month's and a year's end", () => {
    expect(capResetDay("project.daily", window)).toBe("2026-11-29");
    expect(capResetDay("project.weekly", window)).toBe("2026-11-30");
    expect(capResetDay("user.weekly", { day: "2026-11-23", week: "2026-W48" })).toBe("2026-11-30");
    expect(capResetDay("user.daily", { day: "2026-12-31", week: "2026-W53" })).toBe("2027-01-01");
    expect(capResetDay("user.weekly", { day: "2026-12-31", week: "2026-W53" })).toBe("2027-01-04");
  });
});
