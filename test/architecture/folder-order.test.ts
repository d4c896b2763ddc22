import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * governance/'s folders in one direction (issue 29 item 1, docs/decisions/0027-folder-order.md): each folder imports
 * only folders below it in {@link ORDER}, so no two folders import each other. Every import counts — `import type`,
 * `export … from` (also `export * as X from`, which TypeScript's pre-processor does not report), `import()` — because
 * a type shared both ways still makes two folders one concept. governance/'s two root files are nodes of their own:
 * zod.ts (the one zod import) at the bottom, index.ts (the public face) on top.
 */

/** Bottom → top. A folder may import any folder before it, never one after it. docs/architecture.md states the same. */
const ORDER = [
  "zod.ts",
  "time",
  "host",
  "storage",
  "config",
  "text-safety",
  "session",
  "delegation",
  "texts",
  "budget",
  "stop",
  "telemetry",
  "user-hooks",
  "index.ts",
] as const;

const GOVERNANCE = join(REPO_ROOT, "governance");

type Source = { file: string; text: string };
/** A folder-level edge and the file imports that make it. */
type Edges = Map<string, { from: string; to: string; because: string[] }>;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(full);
    return /\.ts$/.test(e.name) && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** Every module specifier of a file: TypeScript's pre-processor plus `export * as X from`, which it skips. */
function specifiersOf(text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/export\s*\*\s*as\s+[\w$]+\s+from\s*["']([^"']+)["']/g)) found.push(m[1] as string);
  return [...new Set(found)];
}

/** The node a governance-relative path belongs to: its first folder, or the file itself at governance/'s root. */
const nodeOf = (governancePath: string): string => governancePath.split(sep)[0] as string;

/** Folder-level edges among `sources` (paths relative to governance/); imports inside one folder are not edges. */
function folderEdges(sources: readonly Source[]): Edges {
  const edges: Edges = new Map();
  for (const s of sources) {
    const from = nodeOf(s.file);
    for (const spec of specifiersOf(s.text)) {
      if (!spec.startsWith(".")) continue;
      const target = relative(".", join(dirname(s.file), spec));
      if (target.startsWith("..")) continue;
      const to = nodeOf(target);
      if (to === from) continue;
      const key = `${from} → ${to}`;
      const edge = edges.get(key) ?? { from, to, because: [] };
      edge.because.push(`${s.file} → ${target}`);
      edges.set(key, edge);
    }
  }
  return edges;
}

/** Pairs of folders that import each other, each pair once, with the file imports of both directions. */
function mutualPairs(edges: Edges): string[] {
  const out: string[] = [];
  for (const e of edges.values()) {
    const back = edges.get(`${e.to} → ${e.from}`);
    if (back && e.from < e.to) out.push(`${e.from} ↔ ${e.to}: ${[...e.because, ...back.because].join(", ")}`);
  }
  return out;
}

/** Edges that point up (or to a node the order does not place). */
function upwardEdges(edges: Edges, order: readonly string[]): string[] {
  const rank = new Map(order.map((n, i) => [n, i]));
  const out: string[] = [];
  for (const e of edges.values()) {
    const a = rank.get(e.from);
    const b = rank.get(e.to);
    if (a === undefined || b === undefined) out.push(`${e.from} → ${e.to}: not in the order (${e.because[0]})`);
    else if (b > a) out.push(`${e.from} → ${e.to} points up: ${e.because.join(", ")}`);
  }
  return out;
}

const sources: Source[] = tsFiles(GOVERNANCE).map((f) => ({ file: relative(GOVERNANCE, f), text: readFileSync(f, "utf8") }));
const edges = folderEdges(sources);

describe("the folder-order checks catch what they claim to", () => {
  const src = (file: string, text: string): Source => ({ file: file.split("/").join(sep), text });

  it("a type-only import, an `export * as` and an `import()` each make an edge; a same-folder import does not", () => {
    const e = folderEdges([
      src("a/x.ts", 'import type { T } from "../b/t.ts";\nimport { y } from "./y.ts";'),
      src("b/t.ts", 'export * as C from "../c/index.ts";'),
      src("c/index.ts", 'const m = await import("../zod.ts");'),
    ]);
    expect([...e.keys()].sort()).toEqual(["a → b", "b → c", "c → zod.ts"]);
  });

  it("two folders importing each other are one pair; an edge against the order is upward", () => {
    const e = folderEdges([src("a/x.ts", 'import "../b/y.ts";'), src("b/y.ts", 'import type { X } from "../a/x.ts";')]);
    expect(mutualPairs(e)).toHaveLength(1);
    expect(upwardEdges(e, ["b", "a"])).toEqual([`b → a points up: ${join("b", "y.ts")} → ${join("a", "x.ts")}`]);
    expect(upwardEdges(folderEdges([src("a/x.ts", 'import "../new/y.ts";')]), ["a"])[0]).toContain("not in the order");
  });
});

describe(`governance/ folders, bottom → top: ${ORDER.join(" → ")}`, () => {
  it("prints the order and finds the edges it checks", () => {
    console.log(`governance/ folder order, bottom → top: ${ORDER.join(" → ")}`);
    expect(edges.size).toBeGreaterThan(10);
  });

  it("every folder and root file of governance/ has a place in the order, and nothing else does", () => {
    const nodes = new Set(sources.map((s) => nodeOf(s.file)));
    expect([...nodes].sort()).toEqual([...ORDER].sort());
  });

  it("no two governance/ folders import each other", () => {
    expect(mutualPairs(edges)).toEqual([]);
  });

  it("every import between governance/ folders points down the order", () => {
    expect(upwardEdges(edges, ORDER)).toEqual([]);
  });

  it("docs/architecture.md states the same order", () => {
    const doc = readFileSync(resolve(REPO_ROOT, "docs", "architecture.md"), "utf8");
    const line = doc.split("\n").find((l) => l.startsWith("Folder order (bottom → top):"));
    expect(line, "docs/architecture.md has a `Folder order (bottom → top): …` line").toBeDefined();
    const stated = [...(line as string).matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\/$/, ""));
    expect(stated).toEqual([...ORDER]);
  });
});
