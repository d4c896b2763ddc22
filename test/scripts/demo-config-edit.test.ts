import { describe, expect, test } from "vitest";
import { parseConfig } from "../../governance/config/config-parse.ts";
import { DEFAULT_CONFIG_YAML } from "../../governance/config/config.ts";
import { ANCHOR, editGeneratedConfig, RUNAWAY_BUDGET } from "../../scripts/demo/config-edit.ts";

/**
 * Scene 1 of `npm run demo` hand-edits the generated governance.yaml and waits for the plugin to reload it. An edit
 * that breaks the file (a duplicate `general:` key once) failed the demo at its first scene; here it fails in
 * milliseconds, without OpenCode.
 */

/** The edited file as the plugin reads it: valid, no problem to report, and carrying what the later scenes rely on. */
function expectEdited(text: string) {
  const parsed = parseConfig(editGeneratedConfig(text));
  if (!parsed.ok) throw new Error(`the edited config is rejected: ${JSON.stringify(parsed.problems)}`);
  expect(parsed.problems).toEqual([]);
  const { config } = parsed;
  expect(config.phase).toBe("release-review");
  expect(config.agents.general).toEqual({ role: "leaf", mayDelegateTo: [] });
  expect(config.anchors).toEqual([expect.objectContaining({ id: ANCHOR, priority: "critical" })]);
  expect(config.budgets.agents["governance-planner"]).toEqual(expect.objectContaining({ toolCalls: RUNAWAY_BUDGET }));
  return config;
}

/** The generated file as it may soon look: it also names the project's own agents, from OpenCode's agent settings. */
const WITH_PROJECT_AGENTS = DEFAULT_CONFIG_YAML.replace(
  /^agents:\n/m,
  "agents:\n  # From OpenCode's agent settings.\n  orchestrator:\n    role: primary\n    mayDelegateTo: [worker]\n  worker:\n    role: leaf\n    mayDelegateTo: []\n",
);

describe("the demo's edit of the generated governance.yaml", () => {
  test("the generated DEFAULT_CONFIG_YAML, edited, loads without a problem (general made a leaf, not named twice)", () => {
    const config = expectEdited(DEFAULT_CONFIG_YAML);
    // Everything else the generated file says stays as generated.
    expect(config.agents["governance-coordinator"]?.role).toBe("primary");
    expect(config.agents.build).toEqual({ role: "delegating", mayDelegateTo: ["*"] });
  });

  test("keeps the generated file's comments", () => {
    const edited = editGeneratedConfig(DEFAULT_CONFIG_YAML);
    const comments = DEFAULT_CONFIG_YAML.split("\n").filter((l) => /^\s*# [A-Z]/.test(l));
    expect(comments.length).toBeGreaterThan(30);
    for (const line of comments) expect(edited).toContain(line);
  });

  test("whatever the layout: the project's own agents named, no general entry, an empty or missing agents map", () => {
    const withoutGeneral = DEFAULT_CONFIG_YAML.replace(/^ {2}general:\n(?: {4}.*\n)+/m, "");
    expect(withoutGeneral).not.toMatch(/^ {2}general:/m);
    const layouts = [WITH_PROJECT_AGENTS, withoutGeneral, "schemaVersion: 1\nagents:\n", "agents: {}\nanchors:\n", "schemaVersion: 1\n", ""];
    for (const layout of layouts) expectEdited(layout);
    expect(expectEdited(WITH_PROJECT_AGENTS).agents.orchestrator).toEqual({ role: "primary", mayDelegateTo: ["worker"] });
  });

  test("an edit of an already edited file is still valid (the demo run twice on a kept project)", () => {
    expectEdited(editGeneratedConfig(DEFAULT_CONFIG_YAML));
  });

  test("a generated file that does not parse is reported, not edited into something else", () => {
    expect(() => editGeneratedConfig("agents:\n  general: {}\n  general: {}\n")).toThrow(/does not parse/);
  });
});
