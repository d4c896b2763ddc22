import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { DEFAULT_CONFIG, DEFAULT_CONFIG_YAML, GovernanceConfig, loadConfig, MAX_ANCHORS, type ConfigParse } from "../../../governance/config/config.ts";
import { parseConfig } from "../../../governance/config/config-parse.ts";
import { makeTempDir } from "../helpers.ts";

function problems(result: ConfigParse) {
  if (result.ok) throw new Error(`expected problems, got a config`);
  return result.problems;
}

describe("GovernanceConfig defaults", () => {
  it("an empty object is a complete config", () => {
    const config = GovernanceConfig.parse({});
    expect(config.language).toEqual({ communication: "English", documents: "English" });
    expect(config.phase).toBe("implementation");
    expect(config.enforcement).toBe("enforce");
    expect(config.delegation.maxDepth).toBe(3);
    expect(config.defaultRole).toEqual({ role: "leaf", mayDelegateTo: [] });
    expect(config.resume).toEqual({ minIdle: 3_600_000, maxIdle: 172_800_000 });
    expect(config.orphans.staleAfter).toBe(600_000);
    expect(config.stop).toEqual({ deadline: 5_000, retryDeadline: 5_000, maxWait: 60_000 });
    expect(config.inject.maxLength).toBe(500);
    expect(config.anchors).toEqual([]);
    expect(config.audit.maxBytes).toBe(1_048_576);
  });

  it("ships the governance hierarchy: a primary coordinator, delegating mid-level agents, two leaves, and OpenCode's built-ins", () => {
    const roles = Object.fromEntries(Object.entries(DEFAULT_CONFIG.agents).map(([name, p]) => [name, p.role]));
    expect(roles).toEqual({
      build: "delegating",
      plan: "delegating",
      general: "delegating",
      explore: "leaf",
      "governance-coordinator": "primary",
      "governance-high": "delegating",
      "governance-planner": "delegating",
      "governance-executor": "delegating",
      "governance-verifier": "delegating",
      "governance-builder": "leaf",
      "governance-validator": "leaf",
    });
    expect(DEFAULT_CONFIG.agents["governance-coordinator"]?.mayDelegateTo).toContain("governance-executor");
    expect(DEFAULT_CONFIG.agents["governance-builder"]?.mayDelegateTo).toEqual([]);
  });

  it("default arrays are not shared between parses (mutating one config cannot leak into another)", () => {
    const a = GovernanceConfig.parse({});
    a.anchors.push({ id: "X", text: "x", priority: "normal" });
    a.agents["governance-builder"]?.mayDelegateTo.push("oops");
    const b = GovernanceConfig.parse({});
    expect(b.anchors).toEqual([]);
    expect(b.agents["governance-builder"]?.mayDelegateTo).toEqual([]);
  });
});

describe("DEFAULT_CONFIG_YAML", () => {
  it("parses to exactly the schema defaults, with no warnings", () => {
    const result = parseConfig(DEFAULT_CONFIG_YAML);
    expect(result).toEqual(expect.objectContaining({ ok: true, config: GovernanceConfig.parse({}), warnings: [], problems: [] }));
  });

  it("spells out every field (nothing is left to an invisible default)", () => {
    const raw = parseDocument(DEFAULT_CONFIG_YAML).toJS() as Record<string, unknown>;
    const keys = (value: unknown, prefix = ""): string[] =>
      value && typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value).flatMap(([k, v]) => [`${prefix}${k}`, ...keys(v, `${prefix}${k}.`)])
        : [];
    expect(keys(raw).sort()).toEqual(keys(DEFAULT_CONFIG).sort());
  });

  it("puts a comment line above every field that has a value (agent entries: above the agent)", () => {
    const lines = DEFAULT_CONFIG_YAML.split("\n");
    const uncommented = lines.filter((line, i) => {
      const m = /^( *)[\w-]+:\s*(\S.*)?$/.exec(line);
      if (!m || m[2] === undefined || (m[1] ?? "").length > 2) return false;
      return !lines[i - 1]?.trim().startsWith("#");
    });
    expect(uncommented).toEqual([]);
  });

  it("shows an example anchor, commented out", () => {
    expect(DEFAULT_CONFIG_YAML).toMatch(/^anchors: \[\]\n# +- id: /m);
  });
});

describe("parseConfig", () => {
  it("an empty file means defaults", () => {
    expect(parseConfig("")).toEqual({ ok: true, config: DEFAULT_CONFIG, warnings: [], problems: [], raw: {} });
    expect(parseConfig("# only a comment\n")).toMatchObject({ ok: true, config: DEFAULT_CONFIG });
  });

  it("accepts durations as text or milliseconds and returns milliseconds", () => {
    const result = parseConfig("resume:\n  minIdle: 90m\n  maxIdle: 2d\norphans:\n  staleAfter: 30000\nstop:\n  deadline: 1500ms\n");
    expect(result.ok && result.config.resume).toEqual({ minIdle: 5_400_000, maxIdle: 172_800_000 });
    expect(result.ok && result.config.orphans.staleAfter).toBe(30_000);
    expect(result.ok && result.config.stop).toEqual({ deadline: 1_500, retryDeadline: 5_000, maxWait: 60_000 });
  });

  it("a user's own agents replace the default map", () => {
    const result = parseConfig("agents:\n  boss:\n    role: primary\n    mayDelegateTo: [worker]\n  worker:\n    role: leaf\n");
    expect(result.ok && result.config.agents).toEqual({
      boss: { role: "primary", mayDelegateTo: ["worker"] },
      worker: { role: "leaf", mayDelegateTo: [] },
    });
  });

  it.each([
    ["a tab used for indentation", "delegation:\n\tmaxDepth: 3\n", { line: 2, column: 1, path: "" }, /tab/i],
    ["a line indented differently from its siblings", "delegation:\n  maxDepth: 3\n enforcement: enforce\n", { line: 3, column: 1 }, /indent|column/i],
    ["a duplicate key", "phase: a\nphase: b\n", { line: 2, column: 1 }, /unique/i],
    ["a wrong type", "phase: x\ndelegation:\n  maxDepth: three\n", { line: 3, column: 13, path: "delegation.maxDepth" }, /number/],
    ["an unknown enum value", "enforcement: strict\n", { line: 1, column: 14, path: "enforcement" }, /enforce.*log-only/],
    ["a negative depth", "delegation:\n  maxDepth: -1\n", { line: 2, column: 13, path: "delegation.maxDepth" }, /0 or more/],
    ["a bad duration", "stop:\n  deadline: soon\n", { line: 2, column: 13, path: "stop.deadline" }, /"90s"/],
    [
      "a bad anchor priority",
      "anchors:\n  - id: A1\n    text: keep ESM\n    priority: urgent\n",
      { line: 4, column: 15, path: "anchors[0].priority" },
      /critical/,
    ],
    ["an unknown role", "agents:\n  x:\n    role: boss\n", { line: 3, column: 11, path: "agents.x.role" }, /leaf/],
    ["minIdle not below maxIdle", "resume:\n  minIdle: 3h\n  maxIdle: 2h\n", { line: 3, column: 12, path: "resume.maxIdle" }, /shorter/],
    ["a list where a mapping belongs", "- a\n- b\n", { line: 1, column: 1, path: "" }, /mapping/],
  ])("reports %s with line and column", (_name, text, where, message) => {
    const [first, ...rest] = problems(parseConfig(text));
    expect(first).toMatchObject(where);
    expect(first?.message).toMatch(message);
    expect(rest.every((p) => typeof p.line === "number")).toBe(true);
  });

  it("reports every schema problem at once, not just the first", () => {
    const found = problems(parseConfig("enforcement: strict\ndelegation:\n  maxDepth: -2\ninject:\n  maxLength: 0\n"));
    expect(found.map((p) => p.path)).toEqual(["enforcement", "delegation.maxDepth", "inject.maxLength"]);
  });

  it("unknown keys are problems with their position and a did-you-mean, and the rest of the file still applies", () => {
    const result = parseConfig("phase: planning\nphaze: typo\ndelegation:\n  maxDepht: 5\nenforcment: log-only\n");
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config.phase).toBe("planning");
    expect(result.config.delegation.maxDepth).toBe(3);
    expect(result.warnings).toEqual([]);
    expect(result.problems).toEqual([
      expect.objectContaining({ path: "phaze", line: 2, column: 1, message: expect.stringContaining('"phaze"') }),
      expect.objectContaining({ path: "delegation.maxDepht", line: 4, column: 3, message: expect.stringContaining('did you mean "maxDepth"?') }),
      expect.objectContaining({ path: "enforcment", line: 5, message: expect.stringContaining('did you mean "enforcement"?') }),
    ]);
  });

  it("suggests keys inside agents, anchors and nested objects, and nothing for a key unlike any", () => {
    const result = parseConfig(
      "agents:\n  a:\n    role: leaf\n    mayDelegateTO: []\nanchors:\n  - id: A\n    txt: x\n    text: y\nresume:\n  minidle: 2h\nzzzzzzzz: 1\n",
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.problems.map((p) => [p.path, p.message.match(/did you mean "(.*)"/)?.[1] ?? null])).toEqual([
      ["agents.a.mayDelegateTO", "mayDelegateTo"],
      ["anchors[0].txt", "text"],
      ["resume.minidle", "minIdle"],
      ["zzzzzzzz", null],
    ]);
  });

  it("bounds anchors: at most MAX_ANCHORS, each at most 300 characters", () => {
    const anchors = (n: number, len = 10) => `anchors:\n${Array.from({ length: n }, (_, i) => `  - id: A${i}\n    text: ${"x".repeat(len)}\n`).join("")}`;
    expect(parseConfig(anchors(MAX_ANCHORS)).ok).toBe(true);
    expect(parseConfig(anchors(MAX_ANCHORS + 1))).toMatchObject({
      ok: false,
      problems: [expect.objectContaining({ path: "anchors", message: expect.stringMatching(/at most 20 anchors/) })],
    });
    expect(parseConfig(anchors(1, 301))).toMatchObject({ ok: false, problems: [expect.objectContaining({ path: "anchors[0].text" })] });
  });

  it("warns when a leaf agent lists delegation targets (they are ignored)", () => {
    const result = parseConfig("agents:\n  b:\n    role: leaf\n    mayDelegateTo: [x]\n");
    expect(result.ok && result.warnings).toEqual([expect.objectContaining({ path: "agents.b.mayDelegateTo", line: 4 })]);
  });
});

describe("loadConfig", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir("gov-config-"));
  });
  afterEach(() => cleanup());

  it("creates the commented default file when it is missing (S1-R02), even its folder", async () => {
    const file = join(dir, ".opencode", "governance.yaml");
    const loaded = await loadConfig(file);
    expect(loaded).toEqual(expect.objectContaining({ config: DEFAULT_CONFIG, source: "file", problems: [], warnings: [], created: true }));
    expect(await readFile(file, "utf8")).toBe(DEFAULT_CONFIG_YAML);
  });

  it("reads the generated file as the defaults, and an edit of one value in it as that edit", async () => {
    const file = join(dir, "governance.yaml");
    await writeFile(file, DEFAULT_CONFIG_YAML);
    expect(await loadConfig(file)).toEqual(expect.objectContaining({ config: DEFAULT_CONFIG, source: "file", problems: [], warnings: [], created: false }));
    // One byte away from the generated text takes the YAML parser's path (the fast path is exact equality only).
    await writeFile(file, DEFAULT_CONFIG_YAML.replace(/^phase: .*$/m, "phase: release"));
    const edited = await loadConfig(file);
    expect(edited.config).toEqual({ ...DEFAULT_CONFIG, phase: "release" });
  });

  it("never overwrites an existing file", async () => {
    const file = join(dir, "governance.yaml");
    await writeFile(file, "phase: release\n");
    const loaded = await loadConfig(file);
    expect(loaded.created).toBe(false);
    expect(loaded.config.phase).toBe("release");
    expect(await readFile(file, "utf8")).toBe("phase: release\n");
  });

  it("concurrent first runs create the file exactly once and leave no temp files", async () => {
    const file = join(dir, "governance.yaml");
    const results = await Promise.all(Array.from({ length: 8 }, () => loadConfig(file)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.every((r) => r.source === "file" && r.problems.length === 0)).toBe(true);
    expect(await readdir(dir)).toEqual(["governance.yaml"]);
  });

  it("a broken file keeps the plugin on the defaults and says where the file is broken", async () => {
    const file = join(dir, "governance.yaml");
    await writeFile(file, "delegation:\n  maxDepth: -1\n");
    const loaded = await loadConfig(file);
    expect(loaded.source).toBe("defaults");
    expect(loaded.config).toEqual(DEFAULT_CONFIG);
    expect(loaded.problems).toEqual([expect.objectContaining({ line: 2, column: 13, path: "delegation.maxDepth" })]);
    expect(await readFile(file, "utf8")).toBe("delegation:\n  maxDepth: -1\n");
  });

  it("a broken file keeps the plugin on the last good config when there is one", async () => {
    const file = join(dir, "governance.yaml");
    await writeFile(file, "phase: review\n");
    const good = await loadConfig(file);
    await writeFile(file, "phase: [unclosed\n");
    const loaded = await loadConfig(file, good.lastGood);
    expect(loaded.source).toBe("last-good");
    expect(loaded.config.phase).toBe("review");
    expect(loaded.problems.length).toBeGreaterThan(0);
  });

  it("an unreadable path is a problem without a position, not a crash", async () => {
    const file = join(dir, "governance.yaml");
    await mkdir(file);
    const loaded = await loadConfig(file);
    expect(loaded.source).toBe("defaults");
    expect(loaded.problems).toEqual([expect.objectContaining({ line: null, column: null })]);
  });

  it("reports unknown keys as problems while still loading the rest from the file", async () => {
    const file = join(dir, "governance.yaml");
    await writeFile(file, "\uFEFFphase: x\nextra: 1\n");
    const loaded = await loadConfig(file);
    expect(loaded.source).toBe("file");
    expect(loaded.config.phase).toBe("x");
    expect(loaded.problems).toEqual([expect.objectContaining({ path: "extra", line: 2 })]);
  });
});
