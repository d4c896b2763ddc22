import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { main } from "../../cli/main.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { buildSchema } from "../../scripts/config-schema.ts";

/**
 * `opencode-governance init` and `doctor` as a user meets them, through the command line entry (`main`), in real
 * temp folders. The global scope is pointed at a temp XDG_CONFIG_HOME.
 */
let root: string;
let dir: string;
let xdg: string;
const savedXdg = process.env.XDG_CONFIG_HOME;

beforeAll(() => {
  // The build writes schema/ (postbuild); these tests may run without a build, so write the same file.
  fs.mkdirSync(path.join(REPO_ROOT, "schema"), { recursive: true });
  fs.writeFileSync(path.join(REPO_ROOT, "schema", "governance.schema.json"), `${JSON.stringify(buildSchema(), null, 2)}\n`);
});
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-init-"));
  dir = path.join(root, "project");
  xdg = path.join(root, "xdg");
  fs.mkdirSync(dir);
  process.env.XDG_CONFIG_HOME = xdg;
});
afterEach(() => {
  if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = savedXdg;
  fs.rmSync(root, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...args, "--dir", dir], { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) });
  return { code, out, err };
}

/** Every file under a folder with its bytes: "nothing was written" means this does not change. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files[path.relative(folder, p)] = fs.readFileSync(p, "utf8");
    }
  };
  walk(folder);
  return files;
}

const shipped = (folder: string) =>
  fs
    .readdirSync(path.join(REPO_ROOT, folder))
    .filter((f) => f.endsWith(".md"))
    .sort();

const COMMENTED_JSONC = `// Project config for OpenCode — reviewed by the team.
{
    "$schema": "https://opencode.ai/config.json",
    /* the model we pay for */
    "model": "anthropic/claude-sonnet-4",
    "plugin": [
        "other-plugin", // keep this one first
    ],
    "theme": "tokyonight", // trailing comma below is fine in JSONC
}
`;

describe("init edits OpenCode's config as a JSONC document", () => {
  test("opencode.jsonc with comments and trailing commas: the plugin is added, every comment and line kept, no opencode.json written", async () => {
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), COMMENTED_JSONC);
    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(fs.existsSync(path.join(dir, "opencode.json"))).toBe(false);
    const text = fs.readFileSync(path.join(dir, "opencode.jsonc"), "utf8");
    // The original lines, in order, plus exactly one new one, indented like its neighbours.
    const added = text.split("\n").filter((l) => !COMMENTED_JSONC.split("\n").includes(l));
    expect(added).toEqual(['        "opencode-governance",']);
    let i = 0;
    for (const line of text.split("\n")) if (line === COMMENTED_JSONC.split("\n")[i]) i++;
    expect(i).toBe(COMMENTED_JSONC.split("\n").length);
    expect((parse(text, [], { allowTrailingComma: true }) as { plugin: string[] }).plugin).toEqual(["other-plugin", "opencode-governance"]);
    expect(res.out).toContain('added "opencode-governance" to the plugin list in opencode.jsonc');
  });

  test("opencode.json with comments and no plugin list: the list is created, the comments stay", async () => {
    const original = '{\n  // my settings\n  "theme": "opencode",\n  "autoupdate": false, // pinned by IT\n}\n';
    fs.writeFileSync(path.join(dir, "opencode.json"), original);
    expect((await cli("init")).code).toBe(0);
    const text = fs.readFileSync(path.join(dir, "opencode.json"), "utf8");
    expect(text).toContain("// my settings");
    expect(text).toContain('"autoupdate": false, // pinned by IT');
    expect(parse(text, [], { allowTrailingComma: true })).toEqual({ theme: "opencode", autoupdate: false, plugin: ["opencode-governance"] });
  });

  test("an existing opencode.jsonc is preferred over opencode.json when both exist", async () => {
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), '{\n  // mine\n  "theme": "x"\n}\n');
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "share": "disabled" }\n');
    expect((await cli("init")).code).toBe(0);
    expect(fs.readFileSync(path.join(dir, "opencode.json"), "utf8")).toBe('{ "share": "disabled" }\n');
    expect(fs.readFileSync(path.join(dir, "opencode.jsonc"), "utf8")).toContain('"opencode-governance"');
  });

  test("a project configured only in .opencode/opencode.jsonc gets that file edited, no root config", async () => {
    fs.mkdirSync(path.join(dir, ".opencode"));
    fs.writeFileSync(path.join(dir, ".opencode", "opencode.jsonc"), '{\n  // here\n  "theme": "x",\n}\n');
    expect((await cli("init")).code).toBe(0);
    expect(fs.existsSync(path.join(dir, "opencode.json"))).toBe(false);
    expect(fs.readFileSync(path.join(dir, ".opencode", "opencode.jsonc"), "utf8")).toBe(
      '{\n  // here\n  "theme": "x",\n  "plugin": ["opencode-governance"],\n}\n',
    );
  });

  test("a config it cannot parse stops it with the line and column, and nothing is written", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), '{\n  "theme": "x"\n  "model": "y"\n}\n');
    const before = snapshot(dir);
    const res = await cli("init");
    expect(res.code).toBe(1);
    expect(res.err).toMatch(/opencode\.json line 3, column 3: CommaExpected/);
    expect(res.err).toContain("Nothing was changed.");
    expect(snapshot(dir)).toEqual(before);
  });

  test('a "plugin" that is not a list is the user\'s to fix: refused, nothing written', async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "plugin": "other-plugin" }\n');
    const before = snapshot(dir);
    const res = await cli("init");
    expect(res.code).toBe(1);
    expect(res.err).toContain('"plugin" is not a list');
    expect(snapshot(dir)).toEqual(before);
  });
});

describe("init installs what governance needs, once", () => {
  test("a bare folder gets opencode.json, the agents, the OpenCode commands, the YAML with its schema line and the schema", async () => {
    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(dir, "opencode.json"), "utf8")).plugin).toEqual(["opencode-governance"]);
    expect(fs.readdirSync(path.join(dir, ".opencode", "agent")).sort()).toEqual(shipped("agents"));
    expect(shipped("commands").length).toBeGreaterThan(0);
    expect(fs.readdirSync(path.join(dir, ".opencode", "command")).sort()).toEqual(shipped("commands"));
    for (const f of shipped("commands")) {
      expect(fs.readFileSync(path.join(dir, ".opencode", "command", f), "utf8")).toBe(fs.readFileSync(path.join(REPO_ROOT, "commands", f), "utf8"));
    }
    const yaml = fs.readFileSync(path.join(dir, ".opencode", "governance.yaml"), "utf8");
    expect(yaml.split("\n")[0]).toBe("# yaml-language-server: $schema=./governance.schema.json");
    // The schema line resolves relative to the YAML file (yaml-language-server's rule): the file is there.
    const schema = JSON.parse(fs.readFileSync(path.join(dir, ".opencode", "governance.schema.json"), "utf8"));
    expect(schema.title).toContain("governance.yaml");
    expect(fs.existsSync(path.join(dir, ".opencode", "governance", ".gitignore"))).toBe(true);
  });

  test("a second run changes nothing and says so", async () => {
    expect((await cli("init")).code).toBe(0);
    const before = snapshot(dir);
    const again = await cli("init");
    expect(again.code).toBe(0);
    expect(again.out).toContain("nothing to change: governance is already installed");
    expect(again.out).not.toMatch(/^(added|installed|wrote|created|updated) /m);
    expect(snapshot(dir)).toEqual(before);
  });

  test("--dry-run lists every change and writes nothing; the real run then does exactly those", async () => {
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), COMMENTED_JSONC);
    const before = snapshot(dir);
    const dry = await cli("init", "--dry-run");
    expect(dry.code).toBe(0);
    expect(snapshot(dir)).toEqual(before);
    const would = dry.out.split("\n").filter((l) => l.startsWith("would "));
    expect(would).toContain('would add "opencode-governance" to the plugin list in opencode.jsonc');
    expect(would.length).toBe(shipped("agents").length + shipped("commands").length + 4);
    const real = await cli("init");
    const did = real.out.split("\n").filter((l) => /^(added|installed|wrote|created|updated) /.test(l));
    expect(did.length).toBe(would.length);
  });

  test("a project's own agents are named in the YAML with their OpenCode roles; --dry-run shows the roles (decision 0030)", async () => {
    const agentDir = path.join(dir, ".opencode", "agent");
    fs.mkdirSync(agentDir, { recursive: true });
    fs.writeFileSync(path.join(agentDir, "orchestrator.md"), "---\nmode: primary\npermission:\n  task: allow\n---\nYou orchestrate.\n");
    fs.writeFileSync(path.join(agentDir, "worker.md"), "---\nmode: subagent\n---\nYou work.\n");
    fs.writeFileSync(
      path.join(dir, "opencode.json"),
      JSON.stringify({ agent: { reviewer: { mode: "subagent", permission: { task: { "*": "deny", worker: "allow" } } } } }),
    );
    const dry = await cli("init", "--dry-run");
    expect(dry.out).toContain(
      [
        "would write .opencode/governance.yaml with the defaults, naming the project's own agents with the roles OpenCode's settings give them:",
        "  orchestrator: primary → any agent (from .opencode/agent/orchestrator.md: mode primary, task allow)",
        '  reviewer: delegating → worker except * (from opencode.json: mode subagent, task "*": deny, "worker": allow)',
        "  worker: leaf → none (from .opencode/agent/worker.md: mode subagent, no task permission)",
      ].join("\n"),
    );
    expect(fs.existsSync(path.join(dir, ".opencode", "governance.yaml"))).toBe(false);
    expect((await cli("init")).code).toBe(0);
    const yaml = fs.readFileSync(path.join(dir, ".opencode", "governance.yaml"), "utf8");
    expect(yaml).toContain(
      '  # from .opencode/agent/orchestrator.md: mode primary, task allow\n  orchestrator:\n    role: primary\n    mayDelegateTo: ["*"]\n',
    );
    expect(yaml).toContain('  reviewer:\n    role: delegating\n    mayDelegateTo: ["!*", "worker"]\n');

    // doctor and status --explain list every agent with its role and where it came from; one added later is told what to add.
    fs.writeFileSync(path.join(agentDir, "newcomer.md"), "---\nmode: subagent\npermission:\n  task: allow\n---\n");
    for (const args of [["doctor"], ["status", "--explain"]]) {
      const out = (await cli(...args)).out;
      expect(out).toMatch(
        / {2}orchestrator +primary +→ any agent +generated from OpenCode settings \(from \.opencode\/agent\/orchestrator\.md: mode primary, task allow\)/,
      );
      expect(out).toMatch(/ {2}governance-builder +leaf +→ none +governance\.yaml entry, as shipped/);
      expect(out).toMatch(/ {2}newcomer +leaf +→ none +defaultRole: not named in \.opencode\/governance\.yaml/);
      expect(out).toContain(
        [
          "`newcomer` is not named in .opencode/governance.yaml, so it may not delegate; to let it, add:",
          "  # from .opencode/agent/newcomer.md: mode subagent, task allow",
          "  newcomer:",
          "    role: delegating",
          '    mayDelegateTo: ["*"]',
        ].join("\n"),
      );
    }
  });

  test("a user's own agent or command file is kept, and said to be kept", async () => {
    const mine = path.join(dir, ".opencode", "command", shipped("commands")[0]!);
    fs.mkdirSync(path.dirname(mine), { recursive: true });
    fs.writeFileSync(mine, "my own command\n");
    const res = await cli("init");
    expect(res.code).toBe(0);
    expect(fs.readFileSync(mine, "utf8")).toBe("my own command\n");
    expect(res.out).toContain(`kept existing ${path.relative(dir, mine)}`);
  });

  test("--global installs into $XDG_CONFIG_HOME/opencode (edits its opencode.jsonc) and leaves the project alone", async () => {
    const globalDir = path.join(xdg, "opencode");
    fs.mkdirSync(globalDir, { recursive: true });
    fs.writeFileSync(path.join(globalDir, "opencode.jsonc"), '{\n  // global\n  "theme": "system",\n}\n');
    const res = await cli("init", "--global");
    expect(res.code, res.err).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([]);
    const text = fs.readFileSync(path.join(globalDir, "opencode.jsonc"), "utf8");
    expect(text).toContain("// global");
    expect((parse(text, [], { allowTrailingComma: true }) as { plugin: string[] }).plugin).toEqual(["opencode-governance"]);
    expect(fs.existsSync(path.join(globalDir, "opencode.json"))).toBe(false);
    expect(fs.readdirSync(path.join(globalDir, "agent")).sort()).toEqual(shipped("agents"));
    expect(fs.readdirSync(path.join(globalDir, "command")).sort()).toEqual(shipped("commands"));
    expect((await cli("init", "--global")).out).toContain("nothing to change");
  });
});

describe("doctor reads the same files", () => {
  test("finds the plugin in a commented opencode.jsonc", async () => {
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), '{\n  // c\n  "plugin": ["opencode-governance",],\n}\n');
    expect((await cli("doctor")).out).toContain("✓ plugin listed in opencode.jsonc");
  });

  test("finds a global install", async () => {
    fs.mkdirSync(path.join(xdg, "opencode"), { recursive: true });
    fs.writeFileSync(path.join(xdg, "opencode", "opencode.json"), '{ "plugin": ["opencode-governance@0.1.0"] }');
    expect((await cli("doctor")).out).toContain(`✓ plugin listed in ${path.join(xdg, "opencode", "opencode.json")}`);
  });

  test("finds a local plugin file named for governance whose re-export path does not say so", async () => {
    const folder = path.join(dir, ".opencode", "plugin");
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, "governance.js"), 'export * from "file:///opt/build/dist/plugin/index.js";\n');
    fs.writeFileSync(path.join(folder, "other.js"), "export const x = 1;\n");
    expect((await cli("doctor")).out).toContain(`✓ local plugin ${path.join(folder, "governance.js")}`);
  });

  test("a config OpenCode cannot parse is a failure, with where", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), '{ "plugin": ["opencode-governance"] ');
    const res = await cli("doctor");
    expect(res.code).toBe(1);
    expect(res.out).toMatch(/✗ OpenCode cannot read its config: .*opencode\.json line 1/);
  });

  test("says when the editor schema the YAML names is missing", async () => {
    expect((await cli("init")).code).toBe(0);
    fs.rmSync(path.join(dir, ".opencode", "governance.schema.json"));
    expect((await cli("doctor")).out).toMatch(/! editor schema \.\/governance\.schema\.json missing/);
  });
});
