import { existsSync } from "node:fs";
import { appendFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../governance/config/config-parse.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { governancePaths } from "../../governance/storage/governance-paths.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { cliProjects } from "./cli-project.ts";
import { runCli } from "./run-cli.ts";

/** The set-up commands on a project with nothing running: `doctor` and `init` (the session commands: cli.test.ts). */
const project = cliProjects();

describe("doctor", () => {
  it("fails on a project without the plugin and says how to install it", async () => {
    const p = await project({ git: true });
    const res = await runCli(["doctor"], { cwd: p.dir });
    expect(res.code).not.toBe(0);
    expect(res.stdout).toMatch(/✗ plugin not installed: run `opencode-governance init`/);
  });

  it("passes when the plugin is listed and has left its start line in the audit log", async () => {
    const p = await project({ git: true });
    await writeFile(join(p.dir, "opencode.json"), JSON.stringify({ plugin: ["opencode-governance"] }));
    const audit = new AuditLog({ paths: governancePaths(p.dir), clock: systemClock });
    expect(await audit.append("plugin_started", { directory: p.dir, pid: 12345 })).toEqual({ ok: true });
    const res = await runCli(["doctor"], { cwd: p.dir });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toContain("✓ plugin listed in opencode.json");
    expect(res.stdout).toContain("✓ plugin loaded in OpenCode");
    expect(res.stdout).toContain("✓ state folder is git-ignored");
  });

  it("reports a broken governance.yaml with line and column", async () => {
    const p = await project({ git: true });
    await writeFile(join(p.dir, "opencode.json"), JSON.stringify({ plugin: ["opencode-governance"] }));
    await mkdir(join(p.dir, ".opencode"), { recursive: true });
    await writeFile(join(p.dir, ".opencode", "governance.yaml"), "phase: implementation\nenforcement: sometimes\ndelegation:\n  maxDepth: -1\n");
    const res = await runCli(["doctor"], { cwd: p.dir });
    expect(res.code).not.toBe(0);
    expect(res.stdout).toMatch(/✗ config line 2, column 14: .*enforce/);
    expect(res.stdout).toMatch(/✗ config line 4, column 13: maxDepth must be 0 or more/);
  });
});

describe("init", () => {
  it("installs the plugin, the governed agents and the default config into an empty project", async () => {
    const p = await project({ bare: true });
    const res = await runCli(["init"], { cwd: p.dir });
    expect(res.code, res.stderr).toBe(0);
    const config = JSON.parse(await readFile(join(p.dir, "opencode.json"), "utf8")) as { plugin: string[] };
    expect(config.plugin).toEqual(["opencode-governance"]);
    const shipped = (await readdir(join(REPO_ROOT, "agents"))).filter((f) => f.endsWith(".md")).sort();
    expect(shipped.length).toBeGreaterThan(0);
    expect((await readdir(join(p.dir, ".opencode", "agent"))).sort()).toEqual(shipped);
    for (const f of shipped) {
      expect(await readFile(join(p.dir, ".opencode", "agent", f), "utf8")).toBe(await readFile(join(REPO_ROOT, "agents", f), "utf8"));
    }
    const yaml = await readFile(join(p.dir, ".opencode", "governance.yaml"), "utf8");
    expect(parseConfig(yaml).ok).toBe(true);
    expect(existsSync(join(p.dir, ".opencode", "governance", ".gitignore"))).toBe(true);
  });

  it("a second init keeps every user edit and does not list the plugin twice", async () => {
    const p = await project();
    expect((await runCli(["init"], { cwd: p.dir })).code).toBe(0);
    const agentFile = join(p.dir, ".opencode", "agent", "governance-builder.md");
    const yamlFile = join(p.dir, ".opencode", "governance.yaml");
    const configFile = join(p.dir, "opencode.json");
    await appendFile(agentFile, "\nUSER EDIT: always run the linter.\n");
    await writeFile(yamlFile, "# mine\nphase: verification\n");
    const userConfig = { $schema: "https://opencode.ai/config.json", theme: "tokyonight", plugin: ["other-plugin", "opencode-governance"] };
    await writeFile(configFile, JSON.stringify(userConfig, null, 2));
    const before = await Promise.all([agentFile, yamlFile, configFile].map((f) => readFile(f, "utf8")));

    const res = await runCli(["init"], { cwd: p.dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("kept existing .opencode/agent/governance-builder.md");
    const after = await Promise.all([agentFile, yamlFile, configFile].map((f) => readFile(f, "utf8")));
    expect(after).toEqual(before);
  });

  it("adds the plugin to an existing opencode.json without dropping the user's settings", async () => {
    const p = await project();
    await writeFile(join(p.dir, "opencode.json"), JSON.stringify({ theme: "tokyonight", plugin: ["other-plugin"] }));
    expect((await runCli(["init"], { cwd: p.dir })).code).toBe(0);
    expect(JSON.parse(await readFile(join(p.dir, "opencode.json"), "utf8"))).toEqual({ theme: "tokyonight", plugin: ["other-plugin", "opencode-governance"] });
  });
});
