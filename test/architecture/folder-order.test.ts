import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * governance/'s and plugin/'s folders each in one direction (issue 29 item 1, docs/decisions/0027-folder-order.md; issue 42
 * item 2, docs/decisions/0075-plugin-folder-order.md): each folder imports only folders below it in its tree's order,
 * so no two folders import each other. One check, two trees. Every import counts — `import type`, `export … from`
 * (also `export * as X from`, which TypeScript's pre-processor does not report), `import()` — because a type shared
 * both ways still makes two folders one concept. A tree's root files are nodes of their own (governance/: zod.ts, the
 * one zod import, at the bottom and index.ts, the public face, on top; plugin/: index.ts, the server entry, on top).
 */

/** A tree, its order bottom → top (a node may import any node before it, never one after it), and the line of docs/architecture.md that states the same. */
type Tree = { name: string; order: readonly string[]; docLine: string };

const TREES: readonly Tree[] = [
  {
    name: "governance",
    order: [
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
    ],
    docLine: "Folder order (bottom → top):",
  },
  {
    // Services at the bottom, the composition root (wiring/) above the hooks, the host adapters on top of it.
    name: "plugin",
    order: ["runtime", "sessions", "stop", "budget", "telemetry", "hooks", "wiring", "opencode-1", "opencode-2", "adapters.ts", "tui", "index.ts"],
    docLine: "plugin/ folder order (bottom → top):",
  },
];

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

/** The node a tree-relative path belongs to: its first folder, or the file itself at the tree's root. */
const nodeOf = (treePath: string): string => treePath.split(sep)[0] as string;

/** Folder-level edges among `sources` (paths relative to their tree); imports inside one folder and out of the tree are not edges. */
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

for (const tree of TREES) {
  const root = join(REPO_ROOT, tree.name);
  const sources: Source[] = tsFiles(root).map((f) => ({ file: relative(root, f), text: readFileSync(f, "utf8") }));
  const edges = folderEdges(sources);

  describe(`${tree.name}/ folders, bottom → top: ${tree.order.join(" → ")}`, () => {
    it("prints the order and finds the edges it checks", () => {
      console.log(`${tree.name}/ folder order, bottom → top: ${tree.order.join(" → ")}`);
      expect(edges.size).toBeGreaterThan(10);
    });

    it(`every folder and root file of ${tree.name}/ has a place in the order, and nothing else does`, () => {
      const nodes = new Set(sources.map((s) => nodeOf(s.file)));
      expect([...nodes].sort()).toEqual([...tree.order].sort());
    });

    it(`no two ${tree.name}/ folders import each other`, () => {
      expect(mutualPairs(edges)).toEqual([]);
    });

    it(`every import between ${tree.name}/ folders points down the order`, () => {
      expect(upwardEdges(edges, tree.order)).toEqual([]);
    });

    it("docs/architecture.md states the same order", () => {
      const doc = readFileSync(resolve(REPO_ROOT, "docs", "architecture.md"), "utf8");
      const line = doc.split("\n").find((l) => l.startsWith(tree.docLine));
      expect(line, `docs/architecture.md has a \`${tree.docLine} …\` line`).toBeDefined();
      const stated = [...(line as string).matchAll(/`([^`]+)`/g)].map((m) => (m[1] as string).replace(/\/$/, ""));
      expect(stated).toEqual([...tree.order]);
    });
  });
}
