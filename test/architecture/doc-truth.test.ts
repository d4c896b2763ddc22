import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * The docs and the comments stay true to the tree (issue 29 §4): a comment that points at a test file points at one
 * that exists, and every issue a comment cites resolves in docs/glossary.md, and a decision record that another one
 * supersedes says so itself. A moved test or a new issue number fails here, not in a reader's hands.
 */

const SOURCE_ROOTS = ["governance", "plugin", "cli", "scripts", "test"];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "fixtures" || entry.name.startsWith(".")) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mjs)$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** The text of every comment in a TypeScript file (strings and code are not comments: a test's example path is not a claim). */
function comments(file: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, readFileSync(file, "utf8"));
  const out: string[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) out.push(scanner.getTokenText());
  }
  return out;
}

const files = SOURCE_ROOTS.filter((r) => existsSync(join(REPO_ROOT, r))).flatMap((r) => sourceFiles(join(REPO_ROOT, r)));
const commentsByFile = new Map(files.map((f) => [relative(REPO_ROOT, f), comments(f).join("\n")]));

describe("comments point at what exists", () => {
  it("every test file a comment names exists", () => {
    const dead: string[] = [];
    for (const [file, text] of commentsByFile) {
      for (const m of text.matchAll(/\btest\/[\w./-]+\.test\.ts\b/g)) {
        if (!existsSync(join(REPO_ROOT, m[0]))) dead.push(`${file}: ${m[0]}`);
      }
    }
    expect(dead).toEqual([]);
  });

  it("every issue a comment cites has a row in docs/glossary.md", () => {
    const glossary = readFileSync(join(REPO_ROOT, "docs", "glossary.md"), "utf8");
    const known = new Set([...glossary.matchAll(/^\| issue (\d+)\b/gm)].map((m) => Number(m[1])));
    const missing = new Set<string>();
    for (const [file, text] of commentsByFile) {
      for (const m of text.matchAll(/\b[Ii]ssue (\d+)\b/g)) if (!known.has(Number(m[1]))) missing.add(`${file}: issue ${m[1]}`);
    }
    expect([...missing]).toEqual([]);
  });
});

describe("decision records", () => {
  const dir = join(REPO_ROOT, "docs", "decisions");
  const records = new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .map((f) => [f.slice(0, 4), readFileSync(join(dir, f), "utf8")]),
  );

  it("a record that another supersedes says so in its own status line", () => {
    const unmarked: string[] = [];
    for (const [id, text] of records) {
      const status = text.split("\n").find((l) => l.startsWith("Status:")) ?? "";
      for (const m of status.matchAll(/[Ss]upersedes[^.;]*?\((\d{4})-/g)) {
        const target = records.get(m[1] as string) ?? "";
        const targetStatus = target.split("\n").find((l) => l.startsWith("Status:")) ?? "";
        if (!/superseded/i.test(targetStatus)) unmarked.push(`${m[1]} (superseded by ${id})`);
      }
    }
    expect(unmarked).toEqual([]);
  });
});

/** Issue 39: nothing in CI ran the demo, so a demo broken by a config change landed unseen. */
describe("first contact runs in CI", () => {
  it(".ci/run runs the demo, after the tests, as a command whose failure fails the run", () => {
    const lines = readFileSync(join(REPO_ROOT, ".ci", "run"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    expect(lines).toContain("set -euo pipefail");
    const demo = lines.indexOf("npm run demo");
    expect(demo).toBeGreaterThan(lines.indexOf("npm test"));
    expect(lines.indexOf("npm test")).toBeGreaterThan(-1);
  });
});
