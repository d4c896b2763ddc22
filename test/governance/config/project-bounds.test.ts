import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configShapeProblem, DEFAULT_CONFIG, loadConfig } from "../../../governance/config/config.ts";
import { MAX_PROBLEMS_LISTED, parseConfig } from "../../../governance/config/config-parse.ts";
import { mergePolicy } from "../../../governance/config/policy-merge.ts";
import { PROJECT_MIN_AUDIT_BYTES } from "../../../governance/config/project-bounds.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function setup(projectYaml: string, userYaml?: string) {
  const root = mkdtempSync(path.join(tmpdir(), "ocg-bounds-"));
  dirs.push(root);
  mkdirSync(path.join(root, "p", ".opencode"), { recursive: true });
  const file = path.join(root, "p", ".opencode", "governance.yaml");
  writeFileSync(file, projectYaml);
  const env = { HOME: root, XDG_CONFIG_HOME: path.join(root, "cfg") };
  if (userYaml !== undefined) {
    mkdirSync(path.join(root, "cfg", "opencode"), { recursive: true });
    writeFileSync(path.join(root, "cfg", "opencode", "governance.yaml"), userYaml);
  }
  return { file, env };
}

describe("what a project's governance.yaml may change alone (issue 20 §2), and what the user's ceilings allow (issue 30)", () => {
  it("enforcement off, a tiny audit log and endless stop deadlines are bounded, each with a problem naming both values", async () => {
    const { file, env } = setup("enforcement: log-only\naudit:\n  maxBytes: 4096\nstop:\n  deadline: 1h\n  retryDeadline: 30s\n");
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.config.enforcement).toBe("enforce");
    expect(loaded.config.audit.maxBytes).toBe(PROJECT_MIN_AUDIT_BYTES);
    expect(loaded.config.stop).toEqual({ deadline: 60_000, retryDeadline: 30_000, maxWait: 60_000 });
    expect(loaded.problems.map((p) => p.path).sort()).toEqual(["audit.maxBytes", "enforcement", "stop.deadline"]);
    expect(loaded.problems.find((p) => p.path === "stop.deadline")?.message).toMatch(/sets 3600s, looser than 60s set by the bound of a project's file/);
  });

  it("tightening is free: a larger audit log and shorter deadlines come through unchanged", () => {
    const config = { ...DEFAULT_CONFIG, audit: { maxBytes: 8 << 20 }, stop: { deadline: 1_000, retryDeadline: 1_000, maxWait: 10_000 } };
    const merged = mergePolicy(config, [{ name: "project", file: "p", settings: { audit: config.audit, stop: config.stop } }]);
    expect(merged.config).toEqual(config);
    expect(merged.refused).toEqual([]);
  });

  it("the user's own config allows them: a project that says nothing gets the user's values, one that says stricter keeps its own", async () => {
    const user = "enforcement: log-only\naudit:\n  maxBytes: 4096\nstop:\n  deadline: 2m\n";
    const silent = setup("phase: x\n", user);
    const loaded = await loadConfig(silent.file, undefined, silent.env);
    expect(loaded.problems).toEqual([]);
    expect([loaded.config.enforcement, loaded.config.audit.maxBytes, loaded.config.stop.deadline]).toEqual(["log-only", 4096, 120_000]);
    expect(loaded.policy.origins).toMatchObject({ enforcement: "user", "audit.maxBytes": "user", "stop.deadline": "user" });
    const strict = setup("enforcement: enforce\naudit:\n  maxBytes: 8388608\n", user);
    const tighter = await loadConfig(strict.file, undefined, strict.env);
    expect(tighter.problems).toEqual([]);
    expect([tighter.config.enforcement, tighter.config.audit.maxBytes]).toEqual(["enforce", 8_388_608]);
    expect(tighter.policy.origins).toMatchObject({ enforcement: "project", "audit.maxBytes": "project" });
  });

  it("a broken or unknown user setting is a problem and changes nothing", async () => {
    const { file, env } = setup("phase: x\n", "phase: not-here\n");
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.config.enforcement).toBe("enforce");
    expect(loaded.problems[0]?.message).toMatch(/governance\.yaml/);
  });
});

describe("config handling is linear and bounded", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `unknownkey${i}: 1`).join("\n");

  it("a file with thousands of entries or a huge line is refused before the YAML parser, in about a millisecond", () => {
    const text = keys(25_000);
    const t = performance.now();
    expect(configShapeProblem(text)).toMatch(/more than the 500 entries/);
    expect(performance.now() - t).toBeLessThan(50);
    expect(configShapeProblem(`{${"a: 1, ".repeat(1_000)}}`)).toMatch(/characters long/);
    expect(configShapeProblem(`# ${"comment\n# ".repeat(5_000)}\nphase: x\n`)).toBeNull();
  });

  it("lists at most 20 problems and counts the rest in one summary", async () => {
    const parsed = parseConfig(keys(400));
    expect(parsed.ok && parsed.problems).toHaveLength(MAX_PROBLEMS_LISTED + 1);
    expect(parsed.ok && parsed.problems.at(-1)?.message).toBe("…and 380 more unknown keys (ignored)");
    const { file, env } = setup(keys(5_000));
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.source).toBe("defaults");
    expect(loaded.problems).toHaveLength(1);
  });
});
