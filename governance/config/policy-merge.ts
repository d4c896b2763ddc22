import { BudgetKey, type BudgetLimits } from "./budget-config.ts";
import { keysOfUnit } from "./budget-kinds.ts";
import type { AgentPolicy, AgentRole, GovernanceConfig } from "./config-schema.ts";
import type { LayerName, LayerSettings, PolicyLayer } from "./layer-settings.ts";
import { BUILT_IN_CEILINGS } from "./project-bounds.ts";
import { widerTarget } from "./target-lists.ts";

/**
 * Three layers, one rule (issue 30, docs/security.md "Three layers"): the organisation's policy, then the user's own
 * file, then the project's `.opencode/governance.yaml`; a layer may only tighten what the layers above it set. Pure.
 *
 * For every limit: the value of the lowest layer that set it, unless it is looser than a ceiling above it — then it
 * is refused (a {@link Refusal}) and the ceiling applies. A key no layer sets keeps the project file's value (the
 * schema default). A layer's `defaultRole` and `budgets.default` also cap each named agent of the layers below
 * (a project cannot escape the user's default budget by naming the agent), without being reported for it.
 */
export type Refusal = {
  path: string;
  layer: "user" | "project";
  value: string;
  ceiling: string;
  ceilingLayer: LayerName;
  message: string;
};

export type PolicyMerge = {
  config: GovernanceConfig;
  /** Dotted path of every limit → the layer its effective value came from. */
  origins: Record<string, LayerName>;
  refused: Refusal[];
};

type Entry<V> = { layer: LayerName; value: V; direct: boolean };
type Looser<V> = (a: V, b: V) => boolean;

const lower: Looser<number> = (a, b) => a > b;
const higher: Looser<number> = (a, b) => a < b;
const ranked =
  <V>(order: readonly V[]): Looser<V> =>
  (a, b) =>
    order.indexOf(a) < order.indexOf(b);
const ENFORCEMENT = ranked(["log-only", "enforce"]);
const CONFINEMENT = ranked(["best-effort", "required"]);
const STRICT_TRUE = ranked([false, true]);
const STRICT_FALSE = ranked([true, false]);
const TELEMETRY_ON = ranked<boolean | "auto">([false, "auto", true]);
const ROLE_RANK: Record<AgentRole, number> = { leaf: 0, primary: 1, delegating: 2 };
const ROLE: Looser<AgentRole> = (a, b) => ROLE_RANK[a] > ROLE_RANK[b];

/** Settings held in milliseconds, shown in seconds: the stop ladder's waits and every duration budget kind. */
const MS_PATHS = new RegExp(`(deadline|retryDeadline|maxWait|${keysOfUnit("ms").join("|")})$`, "i");

function show(path: string, value: unknown): string {
  if (value === Number.POSITIVE_INFINITY) return "no limit";
  if (typeof value === "number" && MS_PATHS.test(path)) return `${value / 1000}s`;
  if (Array.isArray(value)) return `[${value.join(", ")}]`;
  return String(value);
}

const LABEL: Record<LayerName, string> = {
  organisation: "the organisation's policy",
  user: "your user config",
  project: "the project's file",
  "built-in": "the bound of a project's file (set it in your user config to allow more)",
  default: "the default",
};

type Get<V> = (s: LayerSettings) => V | undefined;

class Merger {
  readonly origins: Record<string, LayerName> = {};
  readonly refused: Refusal[] = [];
  constructor(
    readonly layers: readonly PolicyLayer[],
    readonly files: Partial<Record<LayerName, string>>,
  ) {}

  /** Direct entries of every layer (top first), and optional derived caps. */
  entries<V>(get: Get<V>, derived?: Get<V>): Entry<V>[] {
    const out: Entry<V>[] = [];
    for (const l of this.layers) {
      const v = get(l.settings);
      if (v !== undefined) out.push({ layer: l.name, value: v, direct: true });
      else if (derived) {
        const d = derived(l.settings);
        if (d !== undefined) out.push({ layer: l.name, value: d, direct: false });
      }
    }
    return out;
  }

  resolve<V>(path: string, entries: readonly Entry<V>[], base: V, looser: Looser<V>): V {
    let ceiling: Entry<V> | undefined;
    const caps: Entry<V>[] = [];
    let chosen: Entry<V> | undefined;
    for (const e of entries) {
      let bound = ceiling;
      const builtIn = BUILT_IN_CEILINGS[path] as V | undefined;
      if (e.layer === "project" && !bound && builtIn !== undefined) bound = { layer: "built-in", value: builtIn, direct: false };
      if (bound && looser(e.value, bound.value)) {
        if (e.direct && e.layer !== "organisation") this.#refuse(path, e, bound);
        continue;
      }
      if (e.direct) chosen = e;
      caps.push(e);
      ceiling = e;
    }
    let value = chosen?.value ?? base;
    let origin: LayerName = chosen?.layer ?? "default";
    const builtIn = BUILT_IN_CEILINGS[path] as V | undefined;
    if (!chosen && caps.length === 0 && builtIn !== undefined && looser(value, builtIn)) [value, origin] = [builtIn, "built-in"];
    // Derived caps (a layer's defaultRole / default budget over a named agent) tighten without being chosen.
    for (const cap of caps.slice().reverse()) if (looser(value, cap.value)) [value, origin] = [cap.value, cap.layer];
    this.origins[path] = origin;
    return value;
  }

  #refuse<V>(path: string, e: Entry<V>, bound: Entry<V>): void {
    const value = show(path, e.value);
    const ceiling = show(path, bound.value);
    const file = this.files[bound.layer];
    const by = `${LABEL[bound.layer]}${file ? ` (${file})` : ""}`;
    this.refused.push({
      path,
      layer: e.layer as "user" | "project",
      value,
      ceiling,
      ceilingLayer: bound.layer,
      message: `${path}: ${LABEL[e.layer]} sets ${value}, looser than ${ceiling} set by ${by}; ${ceiling} applies`,
    });
  }
}

/**
 * The effective config. `base` is the project's parsed file (schema defaults filled in); `layers` the organisation's,
 * the user's and the project's explicit settings, strongest first (a missing layer is left out).
 */
export function mergePolicy(base: GovernanceConfig, layers: readonly PolicyLayer[]): PolicyMerge {
  const files: Partial<Record<LayerName, string>> = {};
  for (const l of layers) files[l.name] = l.file;
  const m = new Merger(layers, files);
  const num = (path: string, get: Get<number>, b: number, looser = lower) => m.resolve(path, m.entries(get), b, looser);

  const config: GovernanceConfig = {
    ...base,
    enforcement: m.resolve(
      "enforcement",
      m.entries((s) => s.enforcement),
      base.enforcement,
      ENFORCEMENT,
    ),
    confinement: m.resolve(
      "confinement",
      m.entries((s) => s.confinement),
      base.confinement,
      CONFINEMENT,
    ),
    delegation: { ...base.delegation, maxDepth: num("delegation.maxDepth", (s) => s.delegation?.maxDepth, base.delegation.maxDepth) },
    stop: {
      deadline: num("stop.deadline", (s) => s.stop?.deadline, base.stop.deadline),
      retryDeadline: num("stop.retryDeadline", (s) => s.stop?.retryDeadline, base.stop.retryDeadline),
      maxWait: num("stop.maxWait", (s) => s.stop?.maxWait, base.stop.maxWait),
    },
    inject: { maxLength: num("inject.maxLength", (s) => s.inject?.maxLength, base.inject.maxLength) },
    audit: { maxBytes: num("audit.maxBytes", (s) => s.audit?.maxBytes, base.audit.maxBytes, higher) },
    concurrency: {
      perParent: num("concurrency.perParent", (s) => s.concurrency?.perParent, base.concurrency.perParent),
      perProject: num("concurrency.perProject", (s) => s.concurrency?.perProject, base.concurrency.perProject),
    },
    loops: {
      enabled: m.resolve(
        "loops.enabled",
        m.entries((s) => s.loops?.enabled),
        base.loops.enabled,
        STRICT_TRUE,
      ),
      repeat: num("loops.repeat", (s) => s.loops?.repeat, base.loops.repeat),
      pingPong: num("loops.pingPong", (s) => s.loops?.pingPong, base.loops.pingPong),
      // A poll is forgiven later when it must wait longer to count as waiting: higher pollWait/pollGap is stricter.
      pollRepeat: num("loops.pollRepeat", (s) => s.loops?.pollRepeat, base.loops.pollRepeat),
      pollWait: num("loops.pollWait", (s) => s.loops?.pollWait, base.loops.pollWait, higher),
      pollGap: num("loops.pollGap", (s) => s.loops?.pollGap, base.loops.pollGap, higher),
      stopAfter: num("loops.stopAfter", (s) => s.loops?.stopAfter, base.loops.stopAfter),
    },
    budgets: mergeBudgets(m, base),
    ...mergeAgents(m, base),
    telemetry: mergeTelemetry(m, base),
  };
  return { config, origins: m.origins, refused: m.refused };
}

const INF = Number.POSITIVE_INFINITY;

function mergeLimits(
  m: Merger,
  path: string,
  direct: Get<BudgetLimits>,
  derived: Get<BudgetLimits> | undefined,
  base: BudgetLimits,
  /** Caps over time: a key the project's file leaves out sets nothing (its generated `daily: {}` is no loosening). */
  leftOutSetsNothing = false,
): BudgetLimits {
  const out: BudgetLimits = {};
  const project = m.layers.find((l) => l.name === "project")?.settings;
  for (const key of BudgetKey.options) {
    // Inside a scope the project's file states, a key it leaves out is no limit (the scope replaces the default, so
    // `default: {}` is a loosening to refuse where a ceiling exists). In the organisation's or the user's file a
    // key left out sets nothing: a ceiling on toolCalls does not lift the default limit on model requests.
    const at =
      (get: Get<BudgetLimits>): Get<number> =>
      (s) => {
        const limits = get(s);
        return limits === undefined ? undefined : (limits[key] ?? (s === project && !leftOutSetsNothing ? INF : undefined));
      };
    const value = m.resolve(`${path}.${key}`, m.entries(at(direct), derived && at(derived)), base[key] ?? INF, lower);
    if (value !== INF) out[key] = value;
  }
  return out;
}

function mergeBudgets(m: Merger, base: GovernanceConfig): GovernanceConfig["budgets"] {
  const b = base.budgets;
  const names = new Set<string>(Object.keys(b.agents));
  for (const l of m.layers) for (const name of Object.keys(l.settings.budgets?.agents ?? {})) names.add(name);
  const agents: Record<string, BudgetLimits> = {};
  for (const name of [...names].sort()) {
    const own: Get<BudgetLimits> = (s) => (s.budgets?.agents && Object.hasOwn(s.budgets.agents, name) ? s.budgets.agents[name] : undefined);
    agents[name] = mergeLimits(m, `budgets.agents.${name}`, own, (s) => s.budgets?.default, Object.hasOwn(b.agents, name) ? b.agents[name]! : b.default);
  }
  return {
    ...b,
    default: mergeLimits(m, "budgets.default", (s) => s.budgets?.default, undefined, b.default),
    tree: mergeLimits(m, "budgets.tree", (s) => s.budgets?.tree, undefined, b.tree),
    agents,
    // Caps over days and weeks (issue 44): the organisation or the user sets a ceiling, a project only tightens.
    project: {
      daily: mergeLimits(m, "budgets.project.daily", (s) => s.budgets?.project?.daily, undefined, b.project.daily, true),
      weekly: mergeLimits(m, "budgets.project.weekly", (s) => s.budgets?.project?.weekly, undefined, b.project.weekly, true),
    },
    user: {
      daily: mergeLimits(m, "budgets.user.daily", (s) => s.budgets?.user?.daily, undefined, b.user.daily, true),
      weekly: mergeLimits(m, "budgets.user.weekly", (s) => s.budgets?.user?.weekly, undefined, b.user.weekly, true),
    },
  };
}

function mergeAgents(m: Merger, base: GovernanceConfig): Pick<GovernanceConfig, "agents" | "defaultRole"> {
  const names = new Set<string>(Object.keys(base.agents));
  for (const l of m.layers) for (const name of Object.keys(l.settings.agents ?? {})) names.add(name);
  const known = [...names];
  const policy = (
    path: string,
    own: Get<{ role?: AgentRole; mayDelegateTo?: string[] }>,
    derived: Get<{ role?: AgentRole; mayDelegateTo?: string[] }> | undefined,
    b: AgentPolicy,
  ): AgentPolicy => {
    const role = m.resolve(
      `${path}.role`,
      m.entries((s) => own(s)?.role, derived && ((s) => derived(s)?.role)),
      b.role,
      ROLE,
    );
    // A leaf's list is empty whatever it says; a list is looser when it allows an agent the ceiling's does not.
    const targets = (p: { role?: AgentRole; mayDelegateTo?: string[] } | undefined): string[] | undefined =>
      p === undefined ? undefined : p.role === "leaf" ? [] : p.mayDelegateTo;
    const wider: Looser<string[]> = (a, c) => widerTarget(a, c, known) !== null;
    const list = m.resolve(
      `${path}.mayDelegateTo`,
      m.entries((s) => targets(own(s)), derived && ((s) => targets(derived(s)))),
      b.role === "leaf" ? [] : b.mayDelegateTo,
      wider,
    );
    return { role, mayDelegateTo: role === "leaf" ? [] : list };
  };
  const defaultRole = policy("defaultRole", (s) => s.defaultRole, undefined, base.defaultRole);
  const agents: Record<string, AgentPolicy> = {};
  for (const name of known.sort()) {
    const own: Get<{ role?: AgentRole; mayDelegateTo?: string[] }> = (s) => (s.agents && Object.hasOwn(s.agents, name) ? s.agents[name] : undefined);
    agents[name] = policy(`agents.${name}`, own, (s) => s.defaultRole, Object.hasOwn(base.agents, name) ? base.agents[name]! : base.defaultRole);
  }
  return { agents, defaultRole };
}

function mergeTelemetry(m: Merger, base: GovernanceConfig): GovernanceConfig["telemetry"] {
  const t = base.telemetry;
  const entries = m.entries((s) => s.telemetry?.enabled);
  const resolved = m.resolve("telemetry.enabled", entries, t.enabled, TELEMETRY_ON);
  // A project may switch export on, but only toward an endpoint of the user's (the environment's or a config file's
  // above it; issue 41 §5): a `true` only the project says counts as `auto`, on only when such an endpoint exists. As
  // its own, it would send the session tree to whatever listens on the default port.
  const projectOnly = m.origins["telemetry.enabled"] === "project" && !entries.some((e) => e.layer !== "project" && e.value === true);
  const enabled = resolved === true && projectOnly ? "auto" : resolved;
  const toolSpans = m.resolve(
    "telemetry.toolSpans",
    m.entries((s) => s.telemetry?.toolSpans),
    t.toolSpans,
    STRICT_TRUE,
  );
  const includeText = m.resolve(
    "telemetry.includeText",
    m.entries((s) => s.telemetry?.includeText),
    t.includeText,
    STRICT_FALSE,
  );
  // Endpoint and headers travel together, from the highest layer that names an endpoint (the organisation's, else the
  // user's); a project's are refused: it would send the user's credentials wherever the repository says.
  let endpoint = "";
  let headers: Record<string, string> = {};
  let origin: LayerName = "default";
  for (const l of m.layers) {
    const own = l.settings.telemetry;
    const wants = own?.endpoint ?? "";
    if (l.name === "project") {
      if (wants !== "" || Object.keys(own?.headers ?? {}).length > 0) {
        m.refused.push({
          path: "telemetry.endpoint",
          layer: "project",
          value: wants || "(headers only)",
          ceiling: endpoint || "OTEL_EXPORTER_OTLP_ENDPOINT",
          ceilingLayer: origin === "default" ? "built-in" : origin,
          message: `telemetry.endpoint: the project's file may not choose where telemetry goes (it names ${wants || "headers"}); the endpoint and its headers come only from your user config, the organisation's policy or OTEL_EXPORTER_OTLP_ENDPOINT`,
        });
      }
      continue;
    }
    if (wants === "") {
      if (origin === "default" && l.name === "user" && own?.headers) headers = own.headers;
      continue;
    }
    if (origin === "organisation" && wants !== endpoint) {
      m.refused.push({
        path: "telemetry.endpoint",
        layer: "user",
        value: wants,
        ceiling: endpoint,
        ceilingLayer: "organisation",
        message: `telemetry.endpoint: your user config sends to ${wants}, but the organisation's policy requires ${endpoint}; ${endpoint} applies`,
      });
      continue;
    }
    if (origin === "organisation") continue;
    endpoint = wants;
    headers = own?.headers ?? {};
    origin = l.name;
  }
  m.origins["telemetry.endpoint"] = origin;
  return { ...t, enabled, toolSpans, includeText, endpoint, headers };
}
