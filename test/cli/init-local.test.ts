import fs from "node:fs";
import path from "node:path";
import { parse } from "jsonc-parser";
import { describe, expect, test } from "vitest";
import { removePluginByName } from "../../cli/opencode-config.ts";
import { inProcessCliEach } from "./in-process-cli.ts";

/**
 * The install route without a registry (docs/decisions/0031-install-without-registry.md), as `init` and `doctor` meet
 * it in real temp folders: the package installed in the project's node_modules (as `npm install <tarball>` leaves it)
 * gets a local plugin file instead of a by-name entry OpenCode would fetch from the registry; `doctor` names an install
 * OpenCode tried and could not do (its empty cache folder, as OpenCode 1.18.33 leaves it) and the fix. The real binary
 * runs both in test/e2e/tarball-install.test.ts.
 */
let _root: string;
let dir: string;
const cli = inProcessCliEach("ocg-init-local-", (r, d) => {
  _root = r;
  dir = d;
});

/** What `npm install --save-dev ../opencode-governance-0.1.0.tgz` leaves in a project. */
function installFromTarball(): void {
  fs.mkdirSync(path.join(dir, "node_modules", "opencode-governance"), { recursive: true });
  fs.writeFileSync(path.join(dir, "node_modules", "opencode-governance", "package.json"), JSON.stringify({ name: "opencode-governance", version: "0.1.0" }));
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ devDependencies: { "opencode-governance": "file:../opencode-governance-0.1.0.tgz" } }));
}

const shim = () => path.join(dir, ".opencode", "plugins", "opencode-governance.js");
const config = (file = "opencode.json") => parse(fs.readFileSync(path.join(dir, file), "utf8")) as Record<string, unknown>;

describe("init, with the package installed in the project (a tarball)", () => {
  test("writes the local plugin file OpenCode loads without a registry, lists nothing by name; twice changes nothing", async () => {
    installFromTarball();
    const dry = await cli("init", "--dry-run");
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toContain("opencode-governance 0.1.0 is installed in this project's node_modules (file:../opencode-governance-0.1.0.tgz)");
    expect(dry.out).toContain(`would write ${path.join(".opencode", "plugins", "opencode-governance.js")}`);
    expect(fs.existsSync(shim())).toBe(false);

    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(fs.readFileSync(shim(), "utf8")).toMatch(/^export \{ default \} from "opencode-governance";$/m);
    // No opencode.json was needed for OpenCode 1: nothing lists the package by name, so OpenCode never asks a registry.
    expect(fs.existsSync(path.join(dir, "opencode.json"))).toBe(false);

    const again = await cli("init");
    expect(again.out).toContain("nothing to change");
    const doctor = await cli("doctor");
    expect(doctor.out).toContain(`✓ local plugin ${shim()}`);
    expect(doctor.out).not.toContain("✗");
  });

  test("an earlier by-name entry is removed (comments kept): OpenCode would still try the registry for it", async () => {
    installFromTarball();
    fs.writeFileSync(path.join(dir, "opencode.jsonc"), '{\n  // mine\n  "plugin": ["other-plugin", "opencode-governance"],\n}\n');
    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(res.out).toContain('removed "opencode-governance" from the plugin list in opencode.jsonc');
    expect(fs.readFileSync(path.join(dir, "opencode.jsonc"), "utf8")).toContain("// mine");
    expect(config("opencode.jsonc").plugin).toEqual(["other-plugin"]);
    expect(fs.existsSync(shim())).toBe(true);
    expect((await cli("init")).out).toContain("nothing to change");
  });

  test("OpenCode 2: the same file (it loads .js files from .opencode/plugins/), no `plugins` entry, its subagent depth raised", async () => {
    installFromTarball();
    fs.writeFileSync(path.join(dir, "opencode.json"), '{\n  "plugins": ["opencode-governance"]\n}\n');
    const res = await cli("init", "--host", "2");
    expect(res.code, res.err).toBe(0);
    expect(config().plugins).toEqual([]);
    expect(config().experimental).toEqual({ subagent_depth: 4 });
    expect(fs.existsSync(shim())).toBe(true);
    expect((await cli("init", "--host", "2")).out).toContain("nothing to change");
  });

  test("without the package in node_modules (npx from a registry), init lists it by name as before", async () => {
    const res = await cli("init");
    expect(res.code, res.err).toBe(0);
    expect(config().plugin).toEqual(["opencode-governance"]);
    expect(fs.existsSync(shim())).toBe(false);
  });
});

describe("doctor, when OpenCode could not install the plugin", () => {
  const cacheFolder = () => path.join(process.env.XDG_CACHE_HOME!, "opencode", "packages", "opencode-governance@latest");

  test("listed by name, OpenCode's cache folder for it empty (a 404 or no registry): names the problem and the tarball route", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify({ plugin: ["opencode-governance"] }));
    fs.mkdirSync(cacheFolder(), { recursive: true });
    const res = await cli("doctor");
    expect(res.code).toBe(1);
    expect(res.out).toContain(`✗ OpenCode could not install "opencode-governance" from the npm registry: its cache folder ${cacheFolder()} is empty`);
    expect(res.out).toContain("not on the public npm registry yet");
    expect(res.out).toContain("npm install --save-dev <path to opencode-governance-<version>.tgz>");
  });

  test("installed in the cache, or not tried yet (no folder): no such line", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify({ plugin: ["opencode-governance"] }));
    expect((await cli("doctor")).out).not.toContain("could not install");
    fs.mkdirSync(path.join(cacheFolder(), "node_modules", "opencode-governance"), { recursive: true });
    fs.writeFileSync(path.join(cacheFolder(), "node_modules", "opencode-governance", "package.json"), "{}");
    expect((await cli("doctor")).out).not.toContain("could not install");
  });

  test("a pinned version is looked up in its own folder", async () => {
    fs.writeFileSync(path.join(dir, "opencode.json"), JSON.stringify({ plugin: ["opencode-governance@0.1.0"] }));
    fs.mkdirSync(path.join(process.env.XDG_CACHE_HOME!, "opencode", "packages", "opencode-governance@0.1.0"), { recursive: true });
    expect((await cli("doctor")).out).toContain('✗ OpenCode could not install "opencode-governance@0.1.0"');
  });

  test("the local plugin file without the package in node_modules (a fresh clone before npm install)", async () => {
    installFromTarball();
    await cli("init");
    fs.rmSync(path.join(dir, "node_modules"), { recursive: true });
    const res = await cli("doctor");
    expect(res.code).toBe(1);
    expect(res.out).toContain("where it is not installed: run `npm install` here");
  });
});

describe("removePluginByName cuts entries out as a person would", () => {
  test.each([
    ['{\n  // mine\n  "plugin": ["other-plugin", "opencode-governance"],\n}\n', '{\n  // mine\n  "plugin": ["other-plugin"],\n}\n'],
    ['{\n  "plugin": [\n    "a",\n    "opencode-governance", // gov\n    "b",\n  ],\n}\n', '{\n  "plugin": [\n    "a",\n    "b",\n  ],\n}\n'],
    ['{"plugin":["a", "opencode-governance@0.1.0", "opencode-governance"], "x": 1}', '{"plugin":["a"], "x": 1}'],
    ['{"plugin": ["opencode-governance"]}', '{"plugin": []}'],
  ])("%j", (before, after) => {
    expect(removePluginByName(before, "opencode.json", "plugin")).toBe(after);
  });
  test("an entry with options stays (the user's), and a list without the plugin is not touched", () => {
    expect(removePluginByName('{"plugin": [["opencode-governance", {"x": 1}]]}', "opencode.json", "plugin")).toBeUndefined();
    expect(removePluginByName('{"plugin": ["opencode-governance-extra"]}', "opencode.json", "plugin")).toBeUndefined();
  });
});
