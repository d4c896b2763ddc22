import { DEFAULT_AGENTS, DEFAULT_CONFIG_YAML } from "./config-defaults.ts";
import type { AgentPolicy } from "./config-schema.ts";

/**
 * A project's own agents, named in the generated governance.yaml with the role OpenCode's own settings give them
 * (docs/decisions/0030-project-agents-named.md). Without this, an agent the user already runs — an `orchestrator`
 * primary that delegates to its `worker` — falls to `defaultRole` (a leaf, decision 0024) the moment governance is
 * installed. Pure: the host's settings in, the policy and the YAML lines out; the readers (the `config` hook,
 * `init`'s file reader) only gather {@link HostAgentSettings}.
 */

/** The project's config file as a user finds it (texts name it so; governance-paths.ts has the real path). */
export const PROJECT_CONFIG_SHOWN = ".opencode/governance.yaml";

/** An agent as OpenCode configures it: the settings governance reads, and where they came from (a file, shown to users). */
export type HostAgentSettings = {
  name: string;
  /** OpenCode's `mode`: `primary`, `subagent` or `all` (OpenCode's default when unset). */
  mode?: unknown;
  /** OpenCode's `permission`: an action for everything, or a map whose `task` is an action or a map glob → action. */
  permission?: unknown;
  /** OpenCode's older `tools` switches: `task: false` takes the tool away. */
  tools?: unknown;
  /** Where the settings were read, as a user finds it: `.opencode/agent/orchestrator.md`, `opencode.json`. */
  source: string;
};

/** The policy OpenCode's settings give an agent, and the settings it came from, in words (`mode primary, task "*": allow`). */
export type DerivedAgent = { name: string; policy: AgentPolicy; settings: string; source: string };

type Action = "allow" | "ask" | "deny";
const isAction = (v: unknown): v is Action => v === "allow" || v === "ask" || v === "deny";

/** The agent's `task` rules in the order written, or undefined when it has no task permission of its own. */
function taskRules(a: HostAgentSettings): [string, Action][] | undefined {
  const tools = a.tools;
  if (tools && typeof tools === "object" && (tools as Record<string, unknown>).task === false) return [["*", "deny"]];
  const p = a.permission;
  if (isAction(p)) return [["*", p]];
  if (!p || typeof p !== "object" || Array.isArray(p)) return undefined;
  const task = (p as Record<string, unknown>).task;
  if (isAction(task)) return [["*", task]];
  if (task && typeof task === "object" && !Array.isArray(task)) {
    return Object.entries(task as Record<string, unknown>).flatMap(([glob, action]): [string, Action][] =>
      isAction(action) && glob !== "" ? [[glob, action]] : [],
    );
  }
  return undefined;
}

function describe(a: HostAgentSettings, rules: [string, Action][] | undefined): string {
  const mode = a.mode === "primary" || a.mode === "subagent" || a.mode === "all" ? a.mode : "all (unset)";
  if (rules === undefined) return `mode ${mode}, no task permission`;
  if ((a.tools as { task?: unknown } | undefined)?.task === false) return `mode ${mode}, tools task: false`;
  if (isAction(a.permission)) return `mode ${mode}, permission ${a.permission}`;
  if (rules.length === 1 && rules[0]?.[0] === "*" && typeof (a.permission as { task?: unknown }).task !== "object") return `mode ${mode}, task ${rules[0][1]}`;
  return `mode ${mode}, task ${rules.map(([g, act]) => `${JSON.stringify(g)}: ${act}`).join(", ")}`;
}

/**
 * The role OpenCode's own settings give an agent:
 * - a `task` permission, translated entry by entry in its order (OpenCode's rule and governance's: the last matching
 *   entry wins): `allow` and `ask` (the host asks the user, then spawns) name the glob, `deny` becomes `!glob`. Any
 *   target allowed → `primary` for `mode: primary`, else `delegating`; nothing allowed → `leaf`.
 * - no task permission: `mode: primary` → `primary` that may spawn any agent (OpenCode lets a primary it starts
 *   delegate to any agent); any other mode → `leaf` (OpenCode offers a subagent no `task` tool without one).
 */
export function deriveAgentPolicy(a: HostAgentSettings): DerivedAgent {
  const rules = taskRules(a);
  const primary = a.mode === "primary";
  const targets = rules === undefined ? (primary ? ["*"] : []) : rules.map(([glob, action]) => (action === "deny" ? `!${glob}` : glob));
  const allows = targets.some((t) => !t.startsWith("!"));
  const policy: AgentPolicy = allows ? { role: primary ? "primary" : "delegating", mayDelegateTo: targets } : { role: "leaf", mayDelegateTo: [] };
  return { name: a.name, policy, settings: describe(a, rules), source: a.source };
}

/** Agent names the generated file may carry as they are: a name OpenCode derives from a file name, nothing exotic. */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** At most this many agents are named at generation (the file has an entry limit; config.ts MAX_CONFIG_ENTRIES). */
export const MAX_NAMED_AGENTS = 60;

/**
 * The agents to name: those OpenCode knows that the shipped `agents` do not name already (OpenCode's own and
 * governance's, whose entries stay as shipped), with a plain name, sorted, at most {@link MAX_NAMED_AGENTS}.
 */
export function agentsToName(agents: readonly HostAgentSettings[], named: Readonly<Record<string, unknown>> = DEFAULT_AGENTS): HostAgentSettings[] {
  const seen = new Set<string>();
  return agents
    .filter((a) => SAFE_NAME.test(a.name) && !Object.hasOwn(named, a.name) && !seen.has(a.name) && seen.add(a.name))
    .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .slice(0, MAX_NAMED_AGENTS);
}

/** A comment's text: one line, printable, short (a file name or a glob from a cloned repository is untrusted). */
function commentText(s: string): string {
  const flat = s.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, " ");
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat;
}

const flowList = (items: readonly string[]) => `[${items.map((i) => JSON.stringify(i)).join(", ")}]`;

/**
 * The YAML lines naming one agent under `agents:` (two-space indent), with a comment saying where its role came
 * from: `# from .opencode/agent/orchestrator.md: mode primary, task "*": allow`.
 */
export function agentEntryLines(d: DerivedAgent, because?: string): string[] {
  const key = SAFE_NAME.test(d.name) ? d.name : JSON.stringify(d.name);
  return [
    `  # ${commentText(because ?? `from ${d.source}: ${d.settings}`)}`,
    `  ${key}:`,
    `    role: ${d.policy.role}`,
    `    mayDelegateTo: ${flowList(d.policy.mayDelegateTo)}`,
  ];
}

/**
 * What to add to let an agent that is not named delegate: its entry from OpenCode's settings when they let it
 * delegate; else (no settings known, or none that allow a spawn) a delegating entry for any agent, whose comment
 * says to narrow it.
 */
export function suggestedEntry(name: string, settings: HostAgentSettings | undefined): string[] {
  if (settings) {
    const d = deriveAgentPolicy(settings);
    if (d.policy.role !== "leaf") return agentEntryLines(d);
  }
  const because = settings
    ? `OpenCode's settings (${settings.source}: ${deriveAgentPolicy(settings).settings}) allow no target; name the agents it may spawn`
    : "name the agents it may spawn";
  return agentEntryLines({ name, policy: { role: "delegating", mayDelegateTo: ["*"] }, settings: "", source: "" }, because);
}

const AGENTS_END = "  governance-validator:\n    role: leaf\n    mayDelegateTo: []\n";

/**
 * The governance.yaml generated for a project: {@link DEFAULT_CONFIG_YAML} as it is, with the project's own agents
 * (those {@link agentsToName} keeps) added at the end of `agents:`, each with the role OpenCode's settings give it.
 * No agents to name → exactly DEFAULT_CONFIG_YAML.
 */
export function generatedConfigYaml(agents: readonly HostAgentSettings[]): string {
  const named = agentsToName(agents).map(deriveAgentPolicy);
  if (named.length === 0) return DEFAULT_CONFIG_YAML;
  const lines = [
    "  # Your project's own agents, as OpenCode's settings had them when this file was generated: they keep delegating",
    "  # as before, within the depth, budgets and stops below (docs/decisions/0030-project-agents-named.md).",
    ...named.flatMap((d) => agentEntryLines(d)),
  ];
  const at = DEFAULT_CONFIG_YAML.indexOf(AGENTS_END);
  if (at < 0) throw new Error("DEFAULT_CONFIG_YAML no longer ends its agents with governance-validator");
  const end = at + AGENTS_END.length;
  return `${DEFAULT_CONFIG_YAML.slice(0, end)}${lines.join("\n")}\n${DEFAULT_CONFIG_YAML.slice(end)}`;
}

/** The comment lines `generatedConfigYaml` puts above each entry, read back: agent name → "from <source>: <settings>". */
export function generatedOrigins(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^ {2}# (from [^\n]*)\n {2}("[^"\n]*"|[A-Za-z0-9_][A-Za-z0-9_.-]*):\n/gm)) {
    const name = m[2]?.startsWith('"') ? (JSON.parse(m[2]) as string) : (m[2] as string);
    out.set(name, m[1] as string);
  }
  return out;
}
