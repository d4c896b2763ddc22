import { describe, expect, it } from "vitest";
import {
  type CapInput,
  capLimits,
  capStop,
  capStopTargets,
  checkCaps,
  NO_SPEND,
  type SpendUse,
  spendOf,
  spendUse,
  windowDays,
} from "../../../governance/budget/spend-caps.ts";
import { addAmounts } from "../../../governance/budget/budget-usage.ts";
import { DEFAULT_CONFIG, type GovernanceConfig } from "../../../governance/config/config.ts";
import { parseConfig } from "../../../governance/config/config-parse.ts";
import { mergePolicy } from "../../../governance/config/policy-merge.ts";
import { DEFAULT_CONFIG_YAML } from "../../../governance/config/config-defaults.ts";
import { projectSettings } from "../../../governance/config/layer-settings.ts";
import { capSpentNote } from "../../../governance/budget/spend-notices.ts";
import { CHILD_ID, makeRecord, ROOT_ID } from "../fixtures/records.ts";

/** Caps over days and weeks (issue 44): the pure rules the spend guard runs. */

const use = (over: Partial<SpendUse>): SpendUse => ({ ...NO_SPEND, ...over });
const daily = (u: Partial<SpendUse>, limits: CapInput["limits"], window = "2026-11-28"): CapInput => ({
  cap: "project.daily",
  window,
  use: use(u),
  limits,
});
const config = (budgets: Partial<GovernanceConfig["budgets"]>): GovernanceConfig => ({ ...DEFAULT_CONFIG, budgets: { ...DEFAULT_CONFIG.budgets, ...budgets } });
const events = (effects: readonly { type: string; event?: string }[]) => effects.flatMap((e) => (e.type === "audit" ? [e.event] : []));

describe("checkCaps: warn once, spend once, a new window starts clean", () => {
  it("warns at warnAt once, then is spent once at the cap, and stays spent", () => {
    const limits = { cost: 1 };
    const a = checkCaps({}, [daily({ cost: 0.5 }, limits)], 0.8);
    expect(a.warnings).toEqual([]);
    expect(a.effects).toEqual([]);
    const b = checkCaps(a.marks, [daily({ cost: 0.85 }, limits)], 0.8);
    expect(b.warnings).toEqual([{ cap: "project.daily", key: "cost", used: 0.85, limit: 1 }]);
    expect(events(b.effects)).toEqual(["budget_warning"]);
    const c = checkCaps(b.marks, [daily({ cost: 0.9 }, limits)], 0.8);
    expect(c.warnings).toEqual([]);
    expect(c.marks).toBe(b.marks);
    const d = checkCaps(c.marks, [daily({ cost: 1 }, limits)], 0.8);
    expect(d.exceeded).toEqual([{ cap: "project.daily", key: "cost", used: 1, limit: 1 }]);
    expect(events(d.effects)).toEqual(["budget_exceeded"]);
    expect(d.effects.find((e) => e.type === "toast")).toBeDefined();
    const e = checkCaps(d.marks, [daily({ cost: 1.2 }, limits)], 0.8);
    expect(e.exceeded).toEqual([]);
    expect(e.effects).toEqual([]);
    expect(e.spent).toEqual([{ cap: "project.daily", key: "cost", used: 1.2, limit: 1 }]);
  });

  it("a new day forgets yesterday's marks: the cap is not spent today", () => {
    const spent = checkCaps({}, [daily({ cost: 2 }, { cost: 1 })], 0.8);
    expect(spent.spent).toHaveLength(1);
    const today = checkCaps(spent.marks, [daily({ cost: 0.1 }, { cost: 1 }, "2026-11-29")], 0.8);
    expect(today.spent).toEqual([]);
    expect(today.effects).toEqual([]);
    expect(today.marks["project.daily"]?.window).toBe("2026-11-29");
  });

  it("a raise brings a spent cap back under: said once, and it warns again when it passes warnAt", () => {
    const spent = checkCaps({}, [daily({ cost: 1 }, { cost: 1 })], 0.8);
    const raised = checkCaps(spent.marks, [daily({ cost: 1 }, { cost: 3 })], 0.8);
    expect(raised.spent).toEqual([]);
    expect(events(raised.effects)).toEqual(["budget_resumed"]);
    const near = checkCaps(raised.marks, [daily({ cost: 2.5 }, { cost: 3 })], 0.8);
    expect(events(near.effects)).toEqual(["budget_warning"]);
  });

  it("tokens by kind and model requests are caps too; the first key over names the cap", () => {
    const r = checkCaps({}, [daily({ modelRequests: 10, outputTokens: 5_000 }, { modelRequests: 10, outputTokens: 4_000 })], 0.8);
    expect(r.exceeded[0]?.key).toBe("modelRequests");
  });

  it("caps without limits say nothing", () => {
    const r = checkCaps({}, [daily({ cost: 100 }, {})], 0.8);
    expect(r).toMatchObject({ warnings: [], exceeded: [], spent: [], effects: [] });
  });
});

describe("capLimits: a raise counts in its own window", () => {
  const cfg = config({ project: { daily: { cost: 1 }, weekly: { cost: 5 } }, user: { daily: {}, weekly: {} } });
  const window = { day: "2026-11-28", week: "2026-W48" };
  it("a daily raise counts on its day only; a weekly one in its week", () => {
    const raises = [
      { period: "daily" as const, add: { cost: 2 }, day: "2026-11-28" },
      { period: "daily" as const, add: { cost: 7 }, day: "2026-11-27" },
      { period: "weekly" as const, add: { cost: 1 }, day: "2026-11-23" },
      { period: "weekly" as const, add: { cost: 9 }, day: "2026-11-22" }, // Sunday of the week before
    ];
    expect(capLimits(cfg, "project.daily", window, raises)).toEqual({ cost: 3 });
    expect(capLimits(cfg, "project.weekly", window, raises)).toEqual({ cost: 6 });
  });
  it("a raise of a key with no cap adds none", () => {
    expect(capLimits(cfg, "project.daily", window, [{ period: "daily", add: { tokens: 100 }, day: "2026-11-28" }])).toEqual({ cost: 1 });
  });
  it("amounts are stated without float noise: 0.4 + 0.2 is 0.6, 38 × 0.012 is 0.456 (audit lines, hooks and --json read these)", () => {
    const cents = config({ project: { daily: { cost: 0.4 }, weekly: {} }, user: { daily: {}, weekly: {} } });
    expect(capLimits(cents, "project.daily", window, [{ period: "daily", add: { cost: 0.2 }, day: "2026-11-28" }])).toEqual({ cost: 0.6 });
    let sum = 0;
    for (let i = 0; i < 38; i++) sum += 0.012;
    expect(sum).not.toBe(0.456);
    expect(spendUse({ cost: sum, modelRequests: 38 })).toMatchObject({ cost: 0.456, modelRequests: 38 });
    expect(spendUse({ cost: 0.0000014 }).cost).toBe(0.000001);
    // A session's budget raised with `budget <session> --add cost=0.2` likewise (the dashboard's budget column reads it).
    expect(addAmounts({ cost: 0.4, toolCalls: 10 }, { cost: 0.2, toolCalls: 5 })).toEqual({ cost: 0.6, toolCalls: 15 });
  });
});

describe("what a use adds, which days a week sums, whom a spent cap stops", () => {
  it("spendOf: model requests, tokens by kind and their total, cost; tool calls are not spend", () => {
    expect(spendOf({ toolCalls: 3 })).toEqual({});
    expect(spendOf({ modelRequests: 1, tokens: { input: 10, output: 5, reasoning: 0, cacheRead: 2, cacheWrite: 0 }, cost: 0.01 })).toEqual({
      modelRequests: 1,
      tokens: 17,
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 2,
      cost: 0.01,
    });
    expect(spendUse({ cost: 0.5, bogus: 3 })).toEqual(use({ cost: 0.5 }));
  });

  it("windowDays: the week's days up to today, Monday first day of the week", () => {
    expect(windowDays({ day: "2026-11-30", week: "2026-W49" })).toEqual(["2026-11-30"]);
    expect(windowDays({ day: "2026-11-29", week: "2026-W48" })).toEqual([
      "2026-11-29",
      "2026-11-28",
      "2026-11-27",
      "2026-11-26",
      "2026-11-25",
      "2026-11-24",
      "2026-11-23",
    ]);
  });

  it("stops every subagent still at work, never a root; one stop id per cap and window", () => {
    const root = makeRecord({ sessionId: ROOT_ID });
    const child = makeRecord({ sessionId: CHILD_ID, parentId: ROOT_ID, rootId: ROOT_ID, depth: 1, level: 2 });
    const stopping = { ...child, sessionId: "ses_stopping00000000000000001", control: "stopping" as const };
    expect(capStopTargets([root, child, stopping])).toEqual([CHILD_ID]);
    const line = { cap: "user.weekly" as const, key: "cost" as const, used: 50, limit: 50 };
    expect(capStop(line, "2026-W48")).toEqual({
      id: "budget-user.weekly-2026-W48",
      reason: expect.stringContaining("$50.00 of $50.00 cost used (the user's weekly cap (all projects))"),
    });
    expect(capSpentNote([line])).toContain("opencode-governance budget --user --week --add cost=");
  });
});

describe("three layers: the organisation or the user sets a ceiling, a project only tightens", () => {
  const base = (yaml: string) => {
    const parsed = parseConfig(yaml);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    return parsed;
  };
  it("a project's looser daily cap is refused; a tighter one applies; the user's weekly cap holds in every project", () => {
    const project = base("budgets:\n  project:\n    daily: { cost: 50 }\n  user:\n    weekly: { cost: 10 }\n");
    const merged = mergePolicy(project.config, [
      { name: "user", file: "~/.config/opencode/governance.yaml", settings: { budgets: { project: { daily: { cost: 20 } }, user: { weekly: { cost: 40 } } } } },
      { name: "project", file: ".opencode/governance.yaml", settings: { budgets: { project: { daily: { cost: 50 } }, user: { weekly: { cost: 10 } } } } },
    ]);
    expect(merged.config.budgets.project.daily).toEqual({ cost: 20 });
    expect(merged.config.budgets.user.weekly).toEqual({ cost: 10 });
    expect(merged.refused.map((r) => r.path)).toEqual(["budgets.project.daily.cost"]);
  });

  it("the generated project file's empty caps (`daily: {}`) loosen nothing: the user's caps hold, no refusal is reported", () => {
    const parsed = base(DEFAULT_CONFIG_YAML);
    const merged = mergePolicy(parsed.config, [
      { name: "user", file: "~/.config/opencode/governance.yaml", settings: { budgets: { user: { weekly: { cost: 50 } }, project: { daily: { cost: 20 } } } } },
      { name: "project", file: ".opencode/governance.yaml", settings: projectSettings(parsed.raw as Record<string, unknown>) },
    ]);
    expect(merged.config.budgets.user.weekly).toEqual({ cost: 50 });
    expect(merged.config.budgets.project.daily).toEqual({ cost: 20 });
    expect(merged.refused).toEqual([]);
  });

  it("the keys are checked: a tool-call cap over a day is no key (said, and ignored like every unknown key)", () => {
    const parsed = parseConfig("budgets:\n  project:\n    daily: { toolCalls: 5, cost: 2 }\n");
    expect(parsed.ok && parsed.problems.map((w) => w.message).join()).toContain('unknown key "toolCalls" in budgets.project.daily');
    expect(parsed.ok && parsed.config.budgets.project.daily).toEqual({ cost: 2 });
    expect(parseConfig("budgets:\n  user:\n    weekly: { cost: -1 }\n").ok).toBe(false);
  });
});
