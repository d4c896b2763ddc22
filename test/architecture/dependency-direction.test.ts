import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * Conventions 1 and 2 as a test: dependencies point one way (plugin/ and cli/ → governance/, only plugin/ touches
 * the OpenCode host API), files stay small, and every relative import names its `.ts` file (Node ESM and
 * `rewriteRelativeImportExtensions` need the extension; a bare specifier works under tsx and breaks in dist/).
 *
 * Imports are read with TypeScript's own pre-processor, so `import type`, `export … from`, side-effect imports and
 * `import()` all count, and text in comments or strings does not.
 */

const SOURCE_FOLDERS = ["governance", "plugin", "cli"] as const;
type Folder = (typeof SOURCE_FOLDERS)[number];
const HOST_API = "@opencode-ai/plugin";
const MAX_LINES = 400;

type Source = { file: string; folder: string; text: string };
type Violation = string;

/** `.ts` files under `dir`; declaration files never, test files only when asked. */
function tsFiles(dir: string, withTests: boolean): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : tsFiles(full, withTests);
    if (!/\.(ts|mts|tsx)$/.test(e.name) || e.name.endsWith(".d.ts")) return [];
    return withTests || !/\.(test|spec)\.ts$/.test(e.name) ? [full] : [];
  });
}

function load(folder: string, withTests = false): Source[] {
  return tsFiles(join(REPO_ROOT, folder), withTests).map((file) => ({ file: relative(REPO_ROOT, file), folder, text: readFileSync(file, "utf8") }));
}

/** TypeScript's pre-processor skips `export * as X from "…"`; those specifiers are added from the text. */
function importsOf(text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/export\s*\*\s*as\s+[\w$]+\s+from\s*["']([^"']+)["']/g)) found.push(m[1] as string);
  return found;
}

/** The repository folder a relative import lands in (`governance`, `plugin`, …), or undefined for a package. */
function targetFolder(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), specifier));
  return target.split(sep)[0];
}

const isHostApi = (s: string) => s === HOST_API || s.startsWith(`${HOST_API}/`);

/** Which folders each source folder must not import from; the host API is checked separately for every folder. */
const FORBIDDEN: Record<Folder, readonly string[]> = { governance: ["plugin", "cli"], cli: ["plugin"], plugin: ["cli"] };

function directionViolations(sources: readonly Source[]): Violation[] {
  const out: Violation[] = [];
  for (const s of sources) {
    for (const spec of importsOf(s.text)) {
      const to = targetFolder(s.file, spec);
      const forbidden = FORBIDDEN[s.folder as Folder] ?? [];
      if (to && forbidden.includes(to)) out.push(`${s.file} imports ${spec} (${s.folder}/ must not depend on ${to}/)`);
      if (isHostApi(spec) && s.folder !== "plugin") out.push(`${s.file} imports ${spec} (only plugin/ may use the OpenCode host API)`);
    }
  }
  return out;
}

function extensionViolations(sources: readonly Source[]): Violation[] {
  return sources.flatMap((s) =>
    importsOf(s.text)
      .filter((spec) => spec.startsWith(".") && !/\.(ts|mts|tsx|json)$/.test(spec))
      .map((spec) => `${s.file} imports "${spec}" without an explicit .ts extension`),
  );
}

function sizeViolations(sources: readonly Source[], max = MAX_LINES): Violation[] {
  return sources.flatMap((s) => {
    const lines = s.text.split("\n").length - (s.text.endsWith("\n") ? 1 : 0);
    return lines > max ? [`${s.file} has ${lines} lines (max ${max}): split it by concept`] : [];
  });
}

/**
 * Import cycles among the sources (Tarjan's strongly connected components over relative imports, `import type`
 * included: a cycle of types still says two files are one concept split in two). Each cycle is reported once.
 */
function cycleViolations(sources: readonly Source[]): Violation[] {
  const files = new Set(sources.map((s) => s.file));
  const edges = new Map(
    sources.map((s) => [
      s.file,
      importsOf(s.text)
        .filter((spec) => spec.startsWith("."))
        .map((spec) => relative(REPO_ROOT, resolve(REPO_ROOT, dirname(s.file), spec)))
        .filter((f) => files.has(f)),
    ]),
  );
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: Violation[] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w);
    if (component.length > 1) out.push(`import cycle: ${component.sort().join(" ↔ ")}`);
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return out;
}

/**
 * zod only through governance/zod.ts, which turns off zod's JIT before any schema exists (docs/decisions/0006); a
 * direct import would build schemas that compile a parser per object, and `{ z }` would pull zod's whole namespace
 * into the plugin bundle.
 */
const ZOD_HOME = `governance${sep}zod.ts`;
function zodViolations(sources: readonly Source[]): Violation[] {
  return sources.flatMap((s) =>
    importsOf(s.text)
      .filter((spec) => (spec === "zod" || spec.startsWith("zod/")) && s.file !== ZOD_HOME)
      .map((spec) => `${s.file} imports "${spec}" directly: import * as z from governance/zod.ts`),
  );
}

const sources = SOURCE_FOLDERS.flatMap((folder) => load(folder));
/**
 * Everything outside plugin/ that could import the host API by mistake: the core, the CLI, scripts and tests.
 * test/plugin/ is exempt: adapter tests mirror plugin/ and may type hook inputs with the host's own types.
 */
const outsidePlugin = [...load("governance", true), ...load("cli", true), ...load("scripts", true), ...load("test", true)].filter(
  (s) => !s.file.startsWith(`test${sep}plugin${sep}`),
);

describe("the checks catch what they claim to (so a green run means something)", () => {
  const fake = (file: string, text: string): Source => ({ file, folder: file.split("/")[0]!, text });

  it("direction: core → adapter, cli → plugin, and host API outside plugin/ are flagged, whatever the import form", () => {
    const bad = [
      fake("governance/a.ts", 'import { Governor } from "../plugin/governor.ts";'),
      fake("governance/texts/b.ts", 'import type { X } from "../../cli/main.ts";'),
      fake("governance/c.ts", 'export * from "../plugin/index.ts";'),
      fake("governance/d.ts", 'const m = await import("../cli/init.ts");'),
      fake("governance/h.ts", 'export * as Cli from "../cli/main.ts";'),
      fake("cli/e.ts", 'import "../plugin/index.ts";'),
      fake("cli/f.ts", 'import type { Hooks } from "@opencode-ai/plugin";'),
      fake("governance/g.ts", 'import { tool } from "@opencode-ai/plugin/tool";'),
    ];
    expect(directionViolations(bad)).toHaveLength(bad.length);
  });

  it("direction: allowed edges and look-alikes in comments or strings pass", () => {
    const ok = [
      fake("plugin/a.ts", 'import type { PluginInput } from "@opencode-ai/plugin";\nimport { x } from "../governance/x.ts";'),
      fake("cli/b.ts", 'import { y } from "../governance/y.ts";\n// import "../plugin/index.ts"\nconst s = "from \'@opencode-ai/plugin\'";'),
      fake("governance/c.ts", 'import * as z from "../zod.ts";\nimport { w } from "./texts/w.ts";'),
    ];
    expect(directionViolations(ok)).toEqual([]);
  });

  it("zod: a direct import outside governance/zod.ts is flagged, in any form", () => {
    const bad = [
      fake("governance/a.ts", 'import { z } from "zod";'),
      fake("plugin/b.ts", 'import * as z from "zod";'),
      fake("cli/c.ts", 'const z = await import("zod/mini");'),
    ];
    expect(zodViolations(bad)).toHaveLength(bad.length);
    expect(zodViolations([fake("governance/zod.ts", 'import { config } from "zod";\nexport { object } from "zod";')])).toEqual([]);
  });

  it("cycles are flagged, once each; a diamond is not a cycle", () => {
    const cyc = [
      fake("governance/a.ts", 'import "./b.ts";'),
      fake("governance/b.ts", 'import type { X } from "./a.ts";'),
      fake("governance/c.ts", 'import "./a.ts";'),
    ];
    expect(cycleViolations(cyc)).toEqual([`import cycle: ${join("governance", "a.ts")} ↔ ${join("governance", "b.ts")}`]);
    const diamond = [
      fake("plugin/a.ts", 'import "./b.ts"; import "./c.ts";'),
      fake("plugin/b.ts", 'import "./d.ts";'),
      fake("plugin/c.ts", 'import "./d.ts";'),
      fake("plugin/d.ts", ""),
    ];
    expect(cycleViolations(diamond)).toEqual([]);
  });

  it("extensions and size are flagged", () => {
    expect(extensionViolations([fake("cli/a.ts", 'import { b } from "./b";\nexport * from "../governance/c.js";\nimport "node:fs";')])).toHaveLength(2);
    expect(sizeViolations([fake("plugin/big.ts", "x\n".repeat(401))])).toHaveLength(1);
    expect(sizeViolations([fake("plugin/ok.ts", "x\n".repeat(400))])).toEqual([]);
  });
});

describe("the repository's sources", () => {
  it("finds the sources it checks", () => {
    for (const folder of SOURCE_FOLDERS) expect(sources.filter((s) => s.folder === folder).length, folder).toBeGreaterThan(0);
  });

  it("dependencies point one way: governance/ imports neither plugin/ nor cli/, cli/ never imports plugin/", () => {
    expect(directionViolations(sources)).toEqual([]);
  });

  it(`only plugin/ imports ${HOST_API}`, () => {
    expect(directionViolations(outsidePlugin).filter((v) => v.includes(HOST_API))).toEqual([]);
  });

  it("governance/, plugin/ and cli/ use zod only through governance/zod.ts", () => {
    expect(zodViolations(sources)).toEqual([]);
  });

  it("every relative import in governance/, plugin/ and cli/ names its .ts file", () => {
    expect(extensionViolations(sources)).toEqual([]);
  });

  it("no import cycles in governance/, plugin/ or cli/", () => {
    expect(cycleViolations(sources)).toEqual([]);
  });

  it(`no source file in governance/, plugin/ or cli/ is over ${MAX_LINES} lines`, () => {
    expect(sizeViolations(sources)).toEqual([]);
  });

  // The same limit for the tests, their doubles and fixtures, and the scripts (issue 42): a 441-line host double once
  // grew past it unseen because only the product folders were measured.
  it(`no file in test/ or scripts/ is over ${MAX_LINES} lines`, () => {
    const others = [...load("test", true), ...load("scripts", true)];
    expect(others.length).toBeGreaterThan(100);
    expect(sizeViolations(others)).toEqual([]);
  });
});
