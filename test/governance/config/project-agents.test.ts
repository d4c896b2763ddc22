import { describe, expect, it } from "vitest";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_CONFIG, DEFAULT_CONFIG_YAML } from "../../../governance/config/config.ts";
import { parseConfig } from "../../../governance/config/config-parse.ts";
import {
  agentsToName,
  deriveAgentPolicy,
  generatedConfigYaml,
  generatedOrigins,
  type HostAgentSettings,
  MAX_NAMED_AGENTS,
  suggestedEntry,
} from "../../../governance/config/project-agents.ts";
import { parseJsonc, readOpencodeAgents } from "../../../governance/config/opencode-agents.ts";
import { isTargetAllowed } from "../../../governance/config/target-lists.ts";

const agent = (over: Partial<HostAgentSettings>): HostAgentSettings => ({ name: "a", source: ".opencode/agent/a.md", ...over });
const policyOf = (over: Partial<HostAgentSettings>) => deriveAgentPolicy(agent(over)).policy;

describe("deriveAgentPolicy: the role OpenCode's own settings give an agent (decision 0030)", () => {
  it.each([
    ["mode primary, task allow", { mode: "primary", permission: { task: "allow" } }, { role: "primary", mayDelegateTo: ["*"] }],
    ["mode primary, no task permission: OpenCode lets a primary delegate", { mode: "primary" }, { role: "primary", mayDelegateTo: ["*"] }],
    ["mode primary, task deny", { mode: "primary", permission: { task: "deny" } }, { role: "leaf", mayDelegateTo: [] }],
    ["mode subagent, no task permission", { mode: "subagent" }, { role: "leaf", mayDelegateTo: [] }],
    ["mode unset, no task permission", {}, { role: "leaf", mayDelegateTo: [] }],
    ["mode subagent, task allow", { mode: "subagent", permission: { task: "allow" } }, { role: "delegating", mayDelegateTo: ["*"] }],
    ["task ask: the host asks, then spawns", { mode: "all", permission: { task: "ask" } }, { role: "delegating", mayDelegateTo: ["*"] }],
    [
      "a task map in order, deny → !glob",
      { permission: { task: { "*": "deny", "worker-*": "allow", "worker-x": "ask" } } },
      { role: "delegating", mayDelegateTo: ["!*", "worker-*", "worker-x"] },
    ],
    ["a map that allows nothing", { mode: "primary", permission: { task: { "*": "deny" } } }, { role: "leaf", mayDelegateTo: [] }],
    ["permission deny for everything", { mode: "primary", permission: "deny" }, { role: "leaf", mayDelegateTo: [] }],
    ["the older tools switch", { mode: "primary", tools: { task: false } }, { role: "leaf", mayDelegateTo: [] }],
    ["an unknown action is ignored", { permission: { task: { "*": "maybe", w: "allow" } } }, { role: "delegating", mayDelegateTo: ["w"] }],
  ] as const)("%s", (_, over, expected) => {
    expect(policyOf(over as Partial<HostAgentSettings>)).toEqual(expected);
  });

  it("a task map means what OpenCode means: the last matching entry decides", () => {
    const permission = { task: { "*": "allow", "secret-*": "deny", "secret-ok": "allow" } };
    const { mayDelegateTo } = policyOf({ permission });
    expect(["worker", "secret-ok"].every((t) => isTargetAllowed(mayDelegateTo, t))).toBe(true);
    expect(isTargetAllowed(mayDelegateTo, "secret-key")).toBe(false);
  });

  it("says where the role came from, in OpenCode's words", () => {
    expect(deriveAgentPolicy(agent({ mode: "primary", permission: { task: { "*": "allow" } } })).settings).toBe('mode primary, task "*": allow');
    expect(deriveAgentPolicy(agent({ mode: "primary", permission: { task: "allow" } })).settings).toBe("mode primary, task allow");
    expect(deriveAgentPolicy(agent({})).settings).toBe("mode all (unset), no task permission");
  });
});

describe("generatedConfigYaml: the defaults, plus the project's agents", () => {
  const project = [
    agent({ name: "worker", mode: "subagent", source: ".opencode/agent/worker.md" }),
    agent({ name: "orchestrator", mode: "primary", permission: { task: { "*": "allow" } }, source: ".opencode/agent/orchestrator.md" }),
    agent({ name: "build", mode: "primary", permission: { task: "deny" }, source: "opencode.json" }),
  ];

  it("no agents of the project's own → exactly DEFAULT_CONFIG_YAML", () => {
    expect(generatedConfigYaml([])).toBe(DEFAULT_CONFIG_YAML);
    expect(generatedConfigYaml([agent({ name: "governance-builder", mode: "subagent" })])).toBe(DEFAULT_CONFIG_YAML);
  });

  it("the defaults part stays identical; each agent is added with a comment saying where its role came from", () => {
    const text = generatedConfigYaml(project);
    const added = [
      '  # from .opencode/agent/orchestrator.md: mode primary, task "*": allow',
      "  orchestrator:",
      "    role: primary",
      '    mayDelegateTo: ["*"]',
      "  # from .opencode/agent/worker.md: mode subagent, no task permission",
      "  worker:",
      "    role: leaf",
      "    mayDelegateTo: []",
    ].join("\n");
    expect(text).toContain(added);
    // Removing the added block (and its heading) gives the defaults back byte for byte.
    const start = text.indexOf("  # Your project's own agents");
    const end = text.indexOf("resume:");
    expect(`${text.slice(0, start)}\n${text.slice(end)}`).toBe(DEFAULT_CONFIG_YAML);
  });

  it("parses to the schema defaults plus the added agents; `build` keeps its shipped entry", () => {
    const parsed = parseConfig(generatedConfigYaml(project));
    expect(parsed.ok && parsed.problems).toEqual([]);
    if (!parsed.ok) return;
    expect(parsed.config.agents).toEqual({
      ...DEFAULT_CONFIG.agents,
      orchestrator: { role: "primary", mayDelegateTo: ["*"] },
      worker: { role: "leaf", mayDelegateTo: [] },
    });
    const { agents: _a, ...rest } = parsed.config;
    const { agents: _b, ...defaults } = DEFAULT_CONFIG;
    expect(rest).toEqual(defaults);
  });

  it("reads its own comments back (doctor, status --explain)", () => {
    expect(Object.fromEntries(generatedOrigins(generatedConfigYaml(project)))).toEqual({
      orchestrator: 'from .opencode/agent/orchestrator.md: mode primary, task "*": allow',
      worker: "from .opencode/agent/worker.md: mode subagent, no task permission",
    });
  });

  it("hostile names and sources: odd names are left out, a comment stays one line, the count is bounded", () => {
    const odd = [agent({ name: "bad\nname" }), agent({ name: "x: y" }), agent({ name: "ok", source: "a\nevil: true" })];
    expect(agentsToName(odd).map((a) => a.name)).toEqual(["ok"]);
    const text = generatedConfigYaml(odd);
    expect(text).toContain("  # from a evil: true: mode all (unset), no task permission\n  ok:\n");
    expect(parseConfig(text).ok).toBe(true);
    const many = Array.from({ length: MAX_NAMED_AGENTS + 5 }, (_, i) => agent({ name: `a${String(i).padStart(3, "0")}` }));
    expect(agentsToName(many)).toHaveLength(MAX_NAMED_AGENTS);
    expect(parseConfig(generatedConfigYaml(many)).ok).toBe(true);
  });

  it("suggestedEntry: the entry its settings give, else a delegating one to narrow", () => {
    expect(suggestedEntry("n", agent({ name: "n", mode: "subagent", permission: { task: { w: "allow" } }, source: "s.md" }))).toEqual([
      '  # from s.md: mode subagent, task "w": allow',
      "  n:",
      "    role: delegating",
      '    mayDelegateTo: ["w"]',
    ]);
    expect(suggestedEntry("n", undefined)).toEqual(["  # name the agents it may spawn", "  n:", "    role: delegating", '    mayDelegateTo: ["*"]']);
  });
});

describe("readOpencodeAgents: the agents OpenCode's files define", () => {
  it("markdown frontmatter and opencode.json(c) agent entries, project over user, disabled ones dropped", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "ocg-agents-"));
    const dir = path.join(root, "p");
    const home = path.join(root, "home");
    mkdirSync(path.join(dir, ".opencode", "agent"), { recursive: true });
    mkdirSync(path.join(home, ".config", "opencode", "agents"), { recursive: true });
    writeFileSync(path.join(dir, ".opencode", "agent", "orchestrator.md"), "---\nmode: primary\npermission:\n  task: allow\n---\nbody\n");
    writeFileSync(path.join(dir, ".opencode", "agent", "notes.md"), "no frontmatter\n");
    writeFileSync(path.join(home, ".config", "opencode", "agents", "mine.md"), "---\nmode: subagent\n---\n");
    writeFileSync(
      path.join(dir, "opencode.jsonc"),
      '{\n  // comment\n  "agent": { "reviewer": { "mode": "subagent", "permission": { "task": { "*": "allow", }, }, }, "off": { "disable": true }, },\n}\n',
    );
    const agents = await readOpencodeAgents(dir, { HOME: home });
    expect(agents.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "mine", source: "~/.config/opencode/agents/mine.md", mode: "subagent", permission: undefined, tools: undefined },
      { name: "notes", source: ".opencode/agent/notes.md", mode: undefined, permission: undefined, tools: undefined },
      { name: "orchestrator", source: ".opencode/agent/orchestrator.md", mode: "primary", permission: { task: "allow" }, tools: undefined },
      { name: "reviewer", source: "opencode.jsonc", mode: "subagent", permission: { task: { "*": "allow" } }, tools: undefined },
    ]);
  });

  it("parseJsonc keeps strings whole and skips what does not parse", () => {
    expect(parseJsonc('{"a": "// not a comment", /* c */ "b": [1,],}')).toEqual({ a: "// not a comment", b: [1] });
    expect(parseJsonc("{ broken")).toBeUndefined();
  });
});
