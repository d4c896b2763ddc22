import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * What `npm pack` puts in the package, from the build as it is (`npm test` builds first): what a user installs, and
 * what OpenCode's installer unpacks into its cache. Nothing but what runs or documents it.
 */
type Pack = { files: { path: string }[] };
const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  main: string;
  exports: Record<string, string>;
  bin: Record<string, string>;
};

describe("npm pack contents", () => {
  let files: string[];
  beforeAll(() => {
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--loglevel=error"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    files = (JSON.parse(out) as Pack[])[0]!.files.map((f) => f.path).sort();
  });

  test("ships every entry point package.json names (plugin, CLI, governance API)", () => {
    const entries = [pkg.main, ...Object.values(pkg.exports), ...Object.values(pkg.bin)].map((p) => p.replace(/^\.\//, ""));
    for (const entry of entries) expect(files).toContain(entry);
    expect(pkg.exports["./server"]).toBe("./dist/plugin/index.js");
  });

  test("ships index.js at the package root, the file OpenCode 2 loads for a package directory in `plugins`", () => {
    // 2.0.15 resolves `<dir>/server` or `<dir>/index`, not package.json (test/e2e/opencode-2-control.test.ts loads it).
    expect(files).toContain("index.js");
    expect(fs.readFileSync(path.join(REPO_ROOT, "index.js"), "utf8")).toContain('export { default } from "./dist/plugin/index.js"');
  });

  test("ships the type declarations of each entry", () => {
    for (const entry of Object.values(pkg.exports)) expect(files).toContain(entry.replace(/^\.\//, "").replace(/\.js$/, ".d.ts"));
  });

  test("ships the agents and the OpenCode commands init installs", () => {
    for (const folder of ["agents", "commands"]) {
      const source = fs.readdirSync(path.join(REPO_ROOT, folder)).filter((f) => f.endsWith(".md"));
      expect(source.length).toBeGreaterThan(0);
      for (const f of source) expect(files).toContain(`${folder}/${f}`);
    }
  });

  test("ships the JSON Schema of governance.yaml that init copies next to it", () => {
    expect(files).toContain("schema/governance.schema.json");
  });

  test("ships no tests, no TypeScript sources, no source maps, no local state", () => {
    const unwanted = files.filter(
      (f) =>
        /^(test|scripts|plugin|governance|cli|node_modules|\.opencode|\.e2e-cache|\.ci)\//.test(f) ||
        (/\.ts$/.test(f) && !/\.d\.ts$/.test(f)) ||
        /\.map$/.test(f) ||
        /\.test\./.test(f),
    );
    expect(unwanted).toEqual([]);
  });

  test("every shipped file is under a folder package.json lists, or an npm default (README, LICENSE, package.json)", () => {
    const top = new Set(files.map((f) => f.split("/")[0]));
    expect([...top].sort()).toEqual(expect.arrayContaining(["README.md", "agents", "commands", "dist", "index.js", "package.json", "schema"]));
    for (const t of top) expect(["README.md", "LICENSE", "package.json", "index.js", "tui.js", "agents", "commands", "dist", "docs", "schema"]).toContain(t);
  });
});
