import fs from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { parse as parseYaml } from "yaml";
import { describe, expect, test } from "vitest";
import { parseConfig } from "../../governance/config/config-parse.ts";
import { DEFAULT_CONFIG, DEFAULT_CONFIG_YAML } from "../../governance/config/config.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import {
  buildPolicySchema,
  buildSchema,
  describedPaths,
  POLICY_ONLY_DESCRIPTIONS,
  REFERENCE_END,
  REFERENCE_START,
  renderReference,
  schemaPaths,
} from "../../scripts/config-schema.ts";

/**
 * The JSON Schema editors use for governance.yaml (through the file's `# yaml-language-server: $schema=` line) must
 * accept what the plugin accepts and flag what it flags; checked with a real JSON Schema validator (Ajv, draft-07,
 * the draft the schema declares).
 */
const schema = buildSchema();
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
const valid = (value: unknown) => validate(value) as boolean;

describe("governance.yaml JSON Schema (generated from the zod schema)", () => {
  test("is draft-07, the draft yaml-language-server and editors' JSON services read", () => {
    expect(schema.$schema).toBe("http://json-schema.org/draft-07/schema#");
  });

  test("accepts the file the plugin writes (DEFAULT_CONFIG_YAML), an empty file, and the parsed defaults", () => {
    expect(DEFAULT_CONFIG_YAML.split("\n")[0]).toBe("# yaml-language-server: $schema=./governance.schema.json");
    expect(valid(parseYaml(DEFAULT_CONFIG_YAML)), JSON.stringify(validate.errors)).toBe(true);
    expect(valid({})).toBe(true);
    const { resume, orphans, stop, ...rest } = DEFAULT_CONFIG;
    expect(
      valid({ ...rest, resume: { minIdle: "1h", maxIdle: 172_800_000 }, orphans: { staleAfter: "10m" }, stop: { deadline: "5s", retryDeadline: 5000 } }),
    ).toBe(true);
  });

  test.each([
    ["a typo'd top-level key", "delegaton:\n  maxDepth: 2\n"],
    ["a typo'd nested key", "delegation:\n  maxDepht: 2\n"],
    ["a typo'd key in an agent", "agents:\n  builder:\n    role: leaf\n    mayDelegateTO: []\n"],
  ])("flags %s (strict, as the plugin reports unknown keys)", (_what, yaml) => {
    expect(valid(parseYaml(yaml))).toBe(false);
    expect(validate.errors?.some((e) => e.keyword === "additionalProperties")).toBe(true);
    expect(parseConfig(yaml).problems.some((p) => /unknown key/.test(p.message))).toBe(true);
  });

  test.each([
    ["an unknown enforcement", "enforcement: sometimes\n"],
    ["a negative depth", "delegation:\n  maxDepth: -1\n"],
    ["a duration without unit words", "stop:\n  deadline: soon\n"],
    ["an anchor without text", "anchors:\n  - id: a\n"],
    ["an unknown role", "agents:\n  x:\n    role: boss\n"],
  ])("rejects %s, as the plugin does", (_what, yaml) => {
    expect(valid(parseYaml(yaml))).toBe(false);
    expect(parseConfig(yaml).ok).toBe(false);
  });

  test("every key has a description, and no description outlives its key", () => {
    expect(schemaPaths().sort()).toEqual(describedPaths().sort());
  });
});

describe("config reference in docs/user-guide.md", () => {
  test("is the one generated from the schema (run `npm run docs:config` after changing the config)", () => {
    const guide = fs.readFileSync(path.join(REPO_ROOT, "docs", "user-guide.md"), "utf8");
    const start = guide.indexOf(REFERENCE_START);
    const end = guide.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThan(-1);
    expect(guide.slice(start + REFERENCE_START.length, end).trim()).toBe(renderReference().trim());
  });

  test("names every key of the schema", () => {
    const table = renderReference();
    for (const p of schemaPaths()) expect(table).toContain(`| \`${p}\` |`);
  });
});

describe("the organisation's policy and the user's file: their own JSON Schema (issue 30)", () => {
  const policy = buildPolicySchema();
  const check = new Ajv({ strict: false, allErrors: true }).compile(policy);
  const layerPaths = () => {
    const paths: string[] = [];
    const walk = (node: { properties?: Record<string, unknown>; additionalProperties?: unknown }, at: string) => {
      if (at) paths.push(at);
      for (const [k, v] of Object.entries(node.properties ?? {})) walk(v as never, at ? `${at}.${k}` : k);
      if (node.additionalProperties && typeof node.additionalProperties === "object") walk(node.additionalProperties as never, `${at}.*`);
    };
    walk(policy as never, "");
    return paths;
  };

  test("accepts an organisation file with ceilings and telemetry, flags a typo and a project-only key", () => {
    const org =
      "delegation:\n  maxDepth: 3\nbudgets:\n  tree:\n    cost: 5\ntelemetry:\n  enabled: true\n  endpoint: https://otel.example.com\n  headers:\n    x-api-key: k\n";
    expect(check(parseYaml(org)), JSON.stringify(check.errors)).toBe(true);
    expect(check(parseYaml("delegation:\n  maxDepht: 3\n"))).toBe(false);
    expect(check(parseYaml("phase: release\n"))).toBe(false);
  });

  test("accepts the user's hooks as docs/hooks.md writes them, flags an unknown event, a typo'd action and a bad timeout", () => {
    const hooksDoc = fs.readFileSync(path.join(REPO_ROOT, "docs", "hooks.md"), "utf8");
    const example = hooksDoc.match(/```yaml\n(# ~\/\.config\/opencode\/governance\.yaml\nhooks:[\s\S]*?)```/)?.[1];
    expect(example).toBeDefined();
    expect(check(parseYaml(example ?? "")), JSON.stringify(check.errors)).toBe(true);
    expect(check(parseYaml("hooks:\n  session_stoped:\n    command: true\n"))).toBe(false);
    expect(check(parseYaml("hooks:\n  session_stopped:\n    comand: true\n"))).toBe(false);
    expect(check(parseYaml("hooks:\n  session_stopped:\n    command: true\n    timeout: soon\n"))).toBe(false);
    expect(check(parseYaml("hooks:\n  hook_failed:\n    command: true\n"))).toBe(false);
    type Action = { properties: Record<string, { description?: string }> };
    const hooks = policy.properties?.hooks as unknown as { additionalProperties: { anyOf: { anyOf: Action[] }[] } };
    const action = hooks.additionalProperties.anyOf[0]?.anyOf ?? [];
    expect(action.length).toBe(2);
    expect(action.flatMap((a) => Object.values(a.properties)).every((p) => (p.description ?? "").length > 20)).toBe(true);
  });

  test("every key is described", () => {
    const described = new Set([...describedPaths(), ...Object.keys(POLICY_ONLY_DESCRIPTIONS)]);
    expect(layerPaths().filter((p) => !described.has(p))).toEqual([]);
  });
});
