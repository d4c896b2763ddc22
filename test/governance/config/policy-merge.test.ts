import { describe, expect, it } from "vitest";
import { BudgetKey } from "../../../governance/config/budget-config.ts";
import { DEFAULT_CONFIG, type GovernanceConfig } from "../../../governance/config/config-schema.ts";
import type { LayerSettings, PolicyLayer } from "../../../governance/config/layer-settings.ts";
import { mergePolicy } from "../../../governance/config/policy-merge.ts";

/**
 * Issue 30: every limit, a ceiling in the user's file and in the organisation's, and a hostile project that tries to
 * loosen it — refused on every key, with a problem naming both values and the ceiling's layer; and the same project
 * tightening instead — taken.
 */

/** `{a: {b: v}}` from "a.b" (agent and budget names may contain no dots here). */
function at(path: string, value: unknown): LayerSettings {
  const keys = path.split(".");
  let out: unknown = value;
  for (const key of keys.reverse()) out = { [key]: out };
  return out as LayerSettings;
}
function get(config: GovernanceConfig, path: string): unknown {
  let node: unknown = config;
  for (const key of path.split(".")) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

/** `with`: what the project's file also sets for the row to mean anything (a default role that may delegate at all). */
type Row = { path: string; ceiling: unknown; hostile: unknown; tighter: unknown; with?: LayerSettings };

/** The project's settings for a row: the value at its path, plus what the row needs beside it. */
function rowSettings(row: Row, value: unknown): LayerSettings {
  const merge = (a: unknown, b: unknown): unknown =>
    a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)
      ? Object.fromEntries(
          [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, merge((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])]),
        )
      : (b ?? a);
  return merge(row.with ?? {}, at(row.path, value)) as LayerSettings;
}

const BUDGET_VALUES: Record<BudgetKey, [number, number, number]> = {
  modelRequests: [10, 100_000, 5],
  toolCalls: [10, 100_000, 5],
  activeTime: [60_000, 600_000, 30_000],
  tokens: [1_000, 1_000_000, 500],
  inputTokens: [1_000, 1_000_000, 500],
  outputTokens: [1_000, 1_000_000, 500],
  reasoningTokens: [1_000, 1_000_000, 500],
  cacheReadTokens: [1_000, 1_000_000, 500],
  cacheWriteTokens: [1_000, 1_000_000, 500],
  cost: [1, 1_000, 0.5],
};

const ROWS: Row[] = [
  { path: "enforcement", ceiling: "enforce", hostile: "log-only", tighter: "enforce" },
  { path: "delegation.maxDepth", ceiling: 2, hostile: 16, tighter: 1 },
  { path: "defaultRole.role", ceiling: "primary", hostile: "delegating", tighter: "leaf" },
  // An unknown agent is a leaf by default (decision 0024): the project makes it delegating for its targets to matter.
  { path: "defaultRole.mayDelegateTo", ceiling: ["explore"], hostile: ["*"], tighter: [], with: { defaultRole: { role: "delegating" } } },
  { path: "agents.general.role", ceiling: "leaf", hostile: "delegating", tighter: "leaf" },
  { path: "agents.governance-high.mayDelegateTo", ceiling: ["governance-builder"], hostile: ["governance-*", "general"], tighter: [] },
  { path: "agents.governance-high.mayDelegateTo", ceiling: ["*", "!general"], hostile: ["*"], tighter: ["explore"] },
  ...(["default", "tree", "agents.general"] as const).flatMap((scope) =>
    BudgetKey.options.map((key) => {
      const [ceiling, hostile, tighter] = BUDGET_VALUES[key];
      return { path: `budgets.${scope}.${key}`, ceiling, hostile, tighter };
    }),
  ),
  { path: "concurrency.perParent", ceiling: 2, hostile: 100, tighter: 1 },
  { path: "concurrency.perProject", ceiling: 3, hostile: 1000, tighter: 2 },
  { path: "loops.enabled", ceiling: true, hostile: false, tighter: true },
  { path: "loops.repeat", ceiling: 3, hostile: 50, tighter: 2 },
  { path: "loops.pollRepeat", ceiling: 10, hostile: 100, tighter: 5 },
  { path: "loops.pollWait", ceiling: 2_000, hostile: 100, tighter: 5_000 },
  { path: "loops.pollGap", ceiling: 30_000, hostile: 1_000, tighter: 60_000 },
  { path: "loops.pingPong", ceiling: 3, hostile: 25, tighter: 2 },
  { path: "loops.stopAfter", ceiling: 2, hostile: 50, tighter: 1 },
  { path: "stop.deadline", ceiling: 5_000, hostile: 60_000, tighter: 1_000 },
  { path: "stop.retryDeadline", ceiling: 5_000, hostile: 60_000, tighter: 1_000 },
  { path: "stop.maxWait", ceiling: 30_000, hostile: 120_000, tighter: 10_000 },
  { path: "audit.maxBytes", ceiling: 4 << 20, hostile: 1 << 20, tighter: 8 << 20 },
  { path: "inject.maxLength", ceiling: 200, hostile: 4000, tighter: 100 },
  { path: "telemetry.enabled", ceiling: true, hostile: false, tighter: true },
  { path: "telemetry.toolSpans", ceiling: true, hostile: false, tighter: true },
  { path: "telemetry.includeText", ceiling: false, hostile: true, tighter: false },
];

/** The project's file as the loader hands it over: the parsed config (defaults filled in) and what it set itself. */
function projectLayer(settings: LayerSettings): { base: GovernanceConfig; layer: PolicyLayer } {
  const base = structuredClone(DEFAULT_CONFIG) as GovernanceConfig;
  const put = (path: string, value: unknown) => {
    const keys = path.split(".");
    let node = base as unknown as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys.at(-1)!] = value;
  };
  const walk = (value: unknown, prefix: string) => {
    if (value && typeof value === "object" && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
    else put(prefix, value);
  };
  walk(settings, "");
  return { base, layer: { name: "project", file: "/repo/.opencode/governance.yaml", settings } };
}

describe("a project may only tighten: every limit against a user ceiling and an organisation ceiling", () => {
  for (const ceilingLayer of ["user", "organisation"] as const) {
    describe(`ceiling in the ${ceilingLayer} layer`, () => {
      it.each(ROWS)("$path: a looser project value ($hostile) is refused, the ceiling ($ceiling) applies", (row) => {
        const { path, ceiling, hostile } = row;
        const { base, layer } = projectLayer(rowSettings(row, hostile));
        const top: PolicyLayer = { name: ceilingLayer, file: `/${ceilingLayer}.yaml`, settings: at(path, ceiling) };
        const merged = mergePolicy(base, [top, layer]);
        expect(get(merged.config, path)).toEqual(ceiling);
        expect(merged.origins[path]).toBe(ceilingLayer);
        const refusal = merged.refused.find((r) => r.path === path);
        expect(refusal, JSON.stringify(merged.refused)).toMatchObject({ layer: "project", ceilingLayer });
        expect(refusal?.message).toContain(`/${ceilingLayer}.yaml`);
        expect(refusal?.message).toMatch(/looser than/);
      });

      it.each(ROWS)("$path: a stricter project value ($tighter) is taken", (row) => {
        const { path, ceiling, tighter } = row;
        const { base, layer } = projectLayer(rowSettings(row, tighter));
        const merged = mergePolicy(base, [{ name: ceilingLayer, file: "/c.yaml", settings: at(path, ceiling) }, layer]);
        expect(get(merged.config, path)).toEqual(tighter);
        expect(merged.refused).toEqual([]);
      });
    });
  }

  it.each(ROWS)("$path: the user's file cannot loosen the organisation's ceiling either", (row) => {
    const { path, ceiling, hostile } = row;
    const { base, layer } = projectLayer(row.with ?? {});
    const merged = mergePolicy(base, [
      { name: "organisation", file: "/etc/p.yaml", settings: at(path, ceiling) },
      { name: "user", file: "/home/u.yaml", settings: at(path, hostile) },
      layer,
    ]);
    expect(get(merged.config, path)).toEqual(ceiling);
    expect(merged.refused).toEqual([expect.objectContaining({ path, layer: "user", ceilingLayer: "organisation" })]);
  });

  it("the value message names both values and the ceiling's file", () => {
    const { base, layer } = projectLayer({ delegation: { maxDepth: 16 } });
    const merged = mergePolicy(base, [
      { name: "organisation", file: "/etc/opencode-governance/policy.yaml", settings: { delegation: { maxDepth: 3 } } },
      layer,
    ]);
    expect(merged.refused[0]?.message).toBe(
      "delegation.maxDepth: the project's file sets 16, looser than 3 set by the organisation's policy (/etc/opencode-governance/policy.yaml); 3 applies",
    );
  });
});

describe("budgets a project removes or escapes", () => {
  it("a key an upper layer leaves out of a scope sets nothing: the default limits on the other keys stay", () => {
    const { base, layer } = projectLayer({});
    const merged = mergePolicy(base, [{ name: "organisation", file: "/o", settings: { budgets: { default: { toolCalls: 40 } } } }, layer]);
    expect(merged.config.budgets.default).toEqual({ ...DEFAULT_CONFIG.budgets.default, toolCalls: 40 });
    expect(merged.origins["budgets.default.modelRequests"]).toBe("default");
  });

  const user: PolicyLayer = { name: "user", file: "/u.yaml", settings: { budgets: { default: { toolCalls: 3 }, tree: { cost: 2 } } } };

  it("a scope the project empties keeps the ceiling's keys (refused as 'no limit')", () => {
    const { base, layer } = projectLayer({ budgets: { default: {}, tree: {} } });
    base.budgets.default = {};
    base.budgets.tree = {};
    const merged = mergePolicy(base, [user, layer]);
    expect(merged.config.budgets.default).toEqual({ toolCalls: 3 });
    expect(merged.config.budgets.tree).toEqual({ cost: 2 });
    expect(merged.refused.map((r) => [r.path, r.value, r.ceiling])).toEqual([
      ["budgets.default.toolCalls", "no limit", "3"],
      ["budgets.tree.cost", "no limit", "2"],
    ]);
  });

  it("naming an agent does not escape the default ceiling; the project's own smaller default still caps a user's agent entry", () => {
    const { base, layer } = projectLayer({ budgets: { agents: { general: { toolCalls: 1_000 } } } });
    const merged = mergePolicy(base, [user, layer]);
    expect(merged.config.budgets.agents.general).toEqual({ toolCalls: 3 });
    expect(merged.refused.map((r) => r.path)).toEqual(["budgets.agents.general.toolCalls"]);

    const tight = projectLayer({ budgets: { default: { toolCalls: 2 } } });
    tight.base.budgets.default = { toolCalls: 2 };
    const withAgent: PolicyLayer = { name: "user", file: "/u.yaml", settings: { budgets: { agents: { explore: { toolCalls: 50 } } } } };
    const capped = mergePolicy(tight.base, [withAgent, tight.layer]);
    expect(capped.config.budgets.agents.explore).toEqual({ toolCalls: 2 });
    expect(capped.config.budgets.default.toolCalls).toBe(2);
    expect(capped.refused).toEqual([]);
  });
});

describe("agents a project widens through its defaultRole or a new entry", () => {
  it("an agent the organisation makes a leaf through defaultRole stays a leaf when the project lists it as a hub", () => {
    const { base, layer } = projectLayer({ agents: { "my-agent": { role: "delegating", mayDelegateTo: ["*"] } } });
    const merged = mergePolicy(base, [{ name: "organisation", file: "/o", settings: { defaultRole: { role: "leaf" } } }, layer]);
    expect(merged.config.agents["my-agent"]).toEqual({ role: "leaf", mayDelegateTo: [] });
    expect(merged.refused.map((r) => r.path).sort()).toEqual(["agents.my-agent.mayDelegateTo", "agents.my-agent.role"]);
  });
});

describe("telemetry goes only where the user or the organisation sends it (issue 27 §3)", () => {
  it("a project's endpoint and headers are refused; the user's own endpoint and headers travel together", () => {
    const { base, layer } = projectLayer({ telemetry: { endpoint: "http://evil.example:4318", headers: { "x-steal": "1" } } });
    const none = mergePolicy(base, [layer]);
    expect(none.config.telemetry).toMatchObject({ endpoint: "", headers: {} });
    expect(none.refused.map((r) => r.path)).toEqual(["telemetry.endpoint"]);
    const mine: PolicyLayer = { name: "user", file: "/u", settings: { telemetry: { endpoint: "http://mine:4318", headers: { authorization: "Bearer u" } } } };
    const user = mergePolicy(base, [mine, layer]);
    expect(user.config.telemetry).toMatchObject({ endpoint: "http://mine:4318", headers: { authorization: "Bearer u" } });
    expect(user.origins["telemetry.endpoint"]).toBe("user");
  });

  it("a project's enabled: true turns export on only toward the user's endpoint (it counts as auto; issue 41 §5)", () => {
    const { base, layer } = projectLayer({ telemetry: { enabled: true } });
    base.telemetry.enabled = true;
    expect(mergePolicy(base, [layer]).config.telemetry.enabled).toBe("auto");
    const mine: PolicyLayer = { name: "user", file: "/u", settings: { telemetry: { enabled: true } } };
    expect(mergePolicy(base, [mine, layer]).config.telemetry.enabled).toBe(true);
    const off: PolicyLayer = { name: "user", file: "/u", settings: { telemetry: { enabled: false } } };
    expect(mergePolicy(base, [off, layer]).config.telemetry.enabled).toBe("auto");
  });

  it("an organisation that requires its endpoint gets it with its own headers, never the user's", () => {
    const { base, layer } = projectLayer({});
    const org: PolicyLayer = {
      name: "organisation",
      file: "/o",
      settings: { telemetry: { enabled: true, endpoint: "http://org:4318", headers: { "x-org": "k" } } },
    };
    const user: PolicyLayer = {
      name: "user",
      file: "/u",
      settings: { telemetry: { enabled: false, endpoint: "http://mine:4318", headers: { authorization: "Bearer u" } } },
    };
    const merged = mergePolicy(base, [org, user, layer]);
    expect(merged.config.telemetry).toMatchObject({ enabled: true, endpoint: "http://org:4318", headers: { "x-org": "k" } });
    expect(merged.refused.map((r) => [r.path, r.layer])).toEqual([
      ["telemetry.enabled", "user"],
      ["telemetry.endpoint", "user"],
    ]);
  });
});

describe("no layers", () => {
  it("the project's config comes through unchanged", () => {
    const { base, layer } = projectLayer({});
    expect(mergePolicy(base, [layer])).toMatchObject({ config: DEFAULT_CONFIG, refused: [] });
  });
});
