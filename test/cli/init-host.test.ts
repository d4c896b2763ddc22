import fs from "node:fs";
import path from "node:path";
import { parse } from "jsonc-parser";
import { describe, expect, test } from "vitest";
import { detectHost } from "../../cli/opencode-host.ts";
import { inProcessCliEach } from "./in-process-cli.ts";

/**
 * `init` and `doctor` know which OpenCode runs: `opencode --version` (here a stand-in binary through OPENCODE_BIN),
 * else the config files present. OpenCode 2 gets `plugins` and its own subagent depth raised; comments are kept.
 */
let root: string;
let dir: string;
const cli = inProcessCliEach("ocg-init-host-", (r, d) => {
  root = r;
  dir = d;
});

function fakeOpencode(version: string): string {
  const bin = path.join(root, `opencode-${version}`);
  fs.writeFileSync(bin, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
  return bin;
}

describe("init writes for the OpenCode the user runs", () => {
  test("OpenCode 2 (opencode --version 2.0.17): `plugins`, and experimental.subagent_depth raised, comments kept", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("2.0.17");
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), '{\n  // my model\n  "model": "x/y",\n}\n');
    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain("OpenCode 2 (2.0.17)");
    const text = fs.readFileSync(path.join(dir, "opencode.jsonc"), "utf8");
    expect(text).toContain("// my model");
    const config = parse(text) as Record<string, unknown>;
    expect(config.plugins).toEqual(["opencode-governance"]);
    expect(config.plugin).toBeUndefined();
    expect(config.experimental).toEqual({ subagent_depth: 4 });
    // Twice: nothing more to change.
    expect((await cli("init")).out).toContain("nothing to change");
  });

  test("OpenCode 1 (opencode --version 1.18.33): `plugin`, no OpenCode 2 keys", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    expect((await cli("init")).code).toBe(0);
    const config = JSON.parse(fs.readFileSync(path.join(dir, "opencode.json"), "utf8")) as Record<string, unknown>;
    expect(config.plugin).toEqual(["opencode-governance"]);
    expect(config.plugins).toBeUndefined();
    expect(config.experimental).toBeUndefined();
  });

  test("no binary: a config with a `plugins` list says OpenCode 2", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "plugins": ["other"] }\n');
    const res = await cli("init");
    expect(res.out).toContain('has a "plugins" list (OpenCode 2)');
    expect((parse(fs.readFileSync(path.join(dir, "opencode.json"), "utf8")) as { plugins: string[] }).plugins).toEqual(["other", "opencode-governance"]);
  });

  test("no binary, an opencode.json without a plugin list: says the config was seen and the binary is missing (walk 3)", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "model": "x/y" }\n');
    const res = await cli("init", "--dry-run");
    expect(res.out).toContain(`$OPENCODE_BIN (${process.env.OPENCODE_BIN}) does not run`);
    expect(res.out).toContain(`${path.join(dir, "opencode.json")} found but names no plugin list`);
    expect(res.out).toContain('assuming OpenCode 1; plugins go under "plugin"');
    expect(res.out).not.toContain("no opencode binary or config found");
    // doctor marks a guessed host as a warning, not a pass.
    expect((await cli("doctor")).out).toContain("! OpenCode 1 ($OPENCODE_BIN");
    // Without $OPENCODE_BIN: the `opencode` on PATH, and what to do when there is none.
    const env = { ...process.env, OPENCODE_BIN: "", PATH: root };
    expect(detectHost(dir, env).how).toMatch(/^no `opencode` on PATH: install OpenCode \(≥ 1\.15\.13\) or put it on PATH/);
  });

  test("--host overrides detection; a bad value is refused", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    expect((await cli("init", "--host", "2", "--dry-run")).out).toContain('under "plugins"');
    expect((await cli("init", "--host", "3")).code).toBe(2);
  });
});

describe("doctor reports the host", () => {
  const audit = (lines: object[]) => {
    const folder = path.join(dir, ".opencode", "governance");
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, "audit.log"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { mode: 0o600 });
  };

  test("line and version, and where the plugin last started", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    await cli("init");
    audit([
      { at: 1, type: "plugin_started", host: 1, hostVersion: null },
      { at: 2, type: "host_detected", line: 1, version: "1.18.33" },
    ]);
    const out = (await cli("doctor")).out;
    expect(out).toContain("✓ OpenCode 1 1.18.33 (opencode --version says 1.18.33)");
    expect(out).toContain("✓ plugin last started on OpenCode 1 1.18.33");
  });

  test("OpenCode 2 installed but the plugin only ever started on OpenCode 1: a failure", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("2.0.17");
    await cli("init");
    audit([{ at: 1, type: "plugin_started", host: 1 }]);
    const res = await cli("doctor");
    expect(res.out).toContain("✗ OpenCode 2 is installed but the plugin never started on it");
    expect(res.code).toBe(1);
  });

  test("an older OpenCode 1 than the oldest verified is reported", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.14.41");
    await cli("init");
    audit([
      { at: 1, type: "plugin_started", host: 1 },
      { at: 2, type: "host_unsupported", version: "1.14.41", oldestSupported: "1.15.13" },
    ]);
    expect((await cli("doctor")).out).toContain("✗ OpenCode 1.14.41 is older than 1.15.13");
  });
});

describe("init, doctor and the released OpenCode 2 config keys agree (issue 25 item 6)", () => {
  test("OpenCode 2 with the plugin under OpenCode 1's `plugin` key: doctor says so and names the fix", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("2.0.17");
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "plugin": ["opencode-governance"] }\n');
    const out = (await cli("doctor")).out;
    expect(out).toContain('! the plugin is listed under "plugin", but OpenCode 2 lists plugins under "plugins": run `opencode-governance init --host 2`');
    // What init writes for OpenCode 2 satisfies doctor: `plugins` and experimental.subagent_depth.
    await cli("init");
    const after = (await cli("doctor")).out;
    expect(after).not.toContain("lists plugins under");
    expect(after).toContain("✓ experimental.subagent_depth = 4 in opencode.json");
  });

  test("OpenCode 1 with only OpenCode 2's `plugins`: doctor says so", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "plugins": [{ "package": "opencode-governance" }] }\n');
    expect((await cli("doctor")).out).toContain('OpenCode 1 lists plugins under "plugin"');
  });
});

describe("doctor and status show governance coverage (issue 25 item 5)", () => {
  const write = (lines: object[], coverage: object) => {
    const folder = path.join(dir, ".opencode", "governance");
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, "audit.log"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(folder, "coverage.json"), JSON.stringify(coverage), { mode: 0o600 });
  };
  const last = { sessionId: "ses_abc", steps: 14, prefixed: 14, noted: 14, tools: 9, gated: 9, children: 2, linked: 2, gaps: [] };

  test("everything reached: the last session's line, no failure", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    write([{ at: 1, type: "plugin_started", host: 1 }], { schemaVersion: 1, at: 2, host: { line: 1, version: "1.18.33" }, last, gaps: 0 });
    const out = (await cli("doctor")).out;
    expect(out).toContain(
      "✓ last session ses_abc: prefix on 14/14 steps, 9/9 tool calls gated, 2/2 children linked (in the OpenCode process that last ran it)",
    );
    expect(out).not.toContain("governance gaps");
    expect((await cli("status")).out).toContain("coverage: last session ses_abc: prefix on 14/14 steps");
  });

  test("gaps since the last start: a failure naming what is missing", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    write(
      [
        { at: 1, type: "plugin_started", host: 1 },
        { at: 2, type: "governance_gap", sessionId: "ses_abc", missing: "prefix", host: 1, hostVersion: "1.18.33" },
      ],
      { schemaVersion: 1, at: 3, host: { line: 1, version: "1.18.33" }, last: { ...last, prefixed: 0, gaps: ["prefix"] }, gaps: 1 },
    );
    const res = await cli("doctor");
    expect(res.out).toContain("✗ last session ses_abc: prefix on 0/14 steps");
    expect(res.out).toContain("✗ governance gaps reported: 1 since the last start (missing: prefix)");
    expect(res.code).toBe(1);
  });

  test("a coverage file that is not one (a symlink, garbage) is no summary, not an error", async () => {
    process.env.OPENCODE_BIN = fakeOpencode("1.18.33");
    write([{ at: 1, type: "plugin_started", host: 1 }], { nonsense: true });
    const res = await cli("doctor");
    expect(res.out).not.toContain("last session");
    fs.rmSync(path.join(dir, ".opencode", "governance", "coverage.json"));
    fs.symlinkSync("/etc/passwd", path.join(dir, ".opencode", "governance", "coverage.json"));
    expect((await cli("status")).code).toBe(0);
  });
});
