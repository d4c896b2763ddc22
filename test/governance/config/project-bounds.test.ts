import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configShapeProblem, DEFAULT_CONFIG, loadConfig } from "../../../governance/config/config.ts";
import { MAX_PROBLEMS_LISTED, parseConfig } from "../../../governance/config/config-parse.ts";
import { applyProjectBounds, PROJECT_MIN_AUDIT_BYTES } from "../../../governance/config/project-bounds.ts";

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

describe("what a project's governance.yaml may change (issue 20 §2)", () => {
  it("enforcement off, a tiny audit log and endless stop deadlines are bounded, each with a problem", async () => {
    const { file, env } = setup("enforcement: log-only\naudit:\n  maxBytes: 4096\nstop:\n  deadline: 1h\n  retryDeadline: 30s\n");
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.config.enforcement).toBe("enforce");
    expect(loaded.config.audit.maxBytes).toBe(PROJECT_MIN_AUDIT_BYTES);
    expect(loaded.config.stop).toEqual({ deadline: 60_000, retryDeadline: 30_000, maxWait: 60_000 });
    expect(loaded.problems.map((p) => p.path)).toEqual(["enforcement", "audit.maxBytes", "stop.deadline"]);
  });

  it("tightening is free: a larger audit log and shorter deadlines come through unchanged", () => {
    const config = { ...DEFAULT_CONFIG, audit: { maxBytes: 8 << 20 }, stop: { deadline: 1_000, retryDeadline: 1_000, maxWait: 10_000 } };
    expect(applyProjectBounds(config)).toEqual({ config, problems: [] });
  });

  it("the user's own config may set them, and wins over the project's file", async () => {
    const { file, env } = setup(
      "enforcement: enforce\naudit:\n  maxBytes: 8388608\n",
      "enforcement: log-only\naudit:\n  maxBytes: 4096\nstop:\n  deadline: 2m\n",
    );
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.problems).toEqual([]);
    expect(loaded.config.enforcement).toBe("log-only");
    expect(loaded.config.audit.maxBytes).toBe(4096);
    expect(loaded.config.stop.deadline).toBe(120_000);
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
