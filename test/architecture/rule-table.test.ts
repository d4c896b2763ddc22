import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * docs/architecture.md "Each rule in one place", checked line by line: every row names the files that hold its rule,
 * the functions it names are declared in those files, it links at least one test and those exist, and no file of plugin/ or cli/
 * (the adapters) declares a module-level function of the same name — a rule the table gives to the core is not decided again
 * by an adapter under the same name. What cannot be checked from names (a decision copied under another name) is
 * left to review; the record-changes test covers the main one (no record changed outside a core step).
 */

type Row = { rule: string; where: string };
/** `top`: a module-level function, const, class or type; `method`: a class member. */
type Decl = { file: string; name: string; kind: "top" | "method" };

const DOC = join(REPO_ROOT, "docs", "architecture.md");

/** The table's rows (rule, where), in order. */
function parseRuleTable(markdown: string): Row[] {
  const start = markdown.indexOf("## Each rule in one place");
  if (start < 0) return [];
  const rows: Row[] = [];
  for (const line of markdown.slice(start).split("\n").slice(1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|") || /^\|\s*-/.test(line) || /^\|\s*Rule\b/.test(line)) continue;
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length >= 3) rows.push({ rule: cells[1] as string, where: cells[2] as string });
  }
  return rows;
}

/** Identifiers in backticks (`name`, `a`/`b`), without those inside a parenthesis that only qualifies (events, fields). */
function namedFunctions(where: string): string[] {
  const unqualified = where.replace(/\[[^\]]*\]\([^)]*\)/g, "").replace(/\([^()]*\)/g, "");
  return [...unqualified.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1] as string);
}

/** `.ts` paths the cell names (`governance/session/x.ts`, `delegation/x.ts`, `x.ts`), and the test links. */
function namedFiles(where: string): { sources: string[]; links: string[] } {
  const links = [...where.matchAll(/\]\(([^)]+\.ts)\)/g)].map((m) => m[1] as string);
  const bare = where.replace(/\[[^\]]*\]\([^)]*\)/g, "");
  const sources = [...bare.matchAll(/([\w./-]+\.ts)\b/g)].map((m) => m[1] as string);
  return { sources, links };
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [relative(REPO_ROOT, full).split("\\").join("/")] : [];
  });
}

/** Top-level functions, classes and consts, and class methods: what a row may name. */
function declarations(file: string, text: string): Decl[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: Decl[] = [];
  const add = (name: ts.Node | undefined, kind: Decl["kind"] = "top") => {
    if (name && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name))) out.push({ file, name: name.text.replace(/^#/, ""), kind });
  };
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isInterfaceDeclaration(st)) add(st.name);
    else if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) add(d.name);
    else if (ts.isClassDeclaration(st)) {
      add(st.name);
      for (const m of st.members) if (ts.isMethodDeclaration(m) || ts.isGetAccessor(m)) add(m.name, "method");
    }
  }
  return out;
}

const all = (folder: string) => tsFiles(join(REPO_ROOT, folder)).flatMap((f) => declarations(f, readFileSync(join(REPO_ROOT, f), "utf8")));

describe("the checks catch what they claim to", () => {
  it("reads rows, names and files as the table writes them", () => {
    const md =
      "## Each rule in one place\n\n| Rule | Where |\n|---|---|\n| A | `f` (`event`, `idle`) in x/y.ts; `g`/`h` in z.ts ([test](../test/a.test.ts)) |\n\n## Next\n| no | row |";
    const rows = parseRuleTable(md);
    expect(rows).toHaveLength(1);
    expect(namedFunctions(rows[0]!.where)).toEqual(["f", "g", "h"]);
    expect(namedFiles(rows[0]!.where)).toEqual({ sources: ["x/y.ts", "z.ts"], links: ["../test/a.test.ts"] });
  });
  it("finds functions, consts, classes and methods", () => {
    const names = declarations(
      "x.ts",
      "export function a() {}\nconst b = 1;\nclass C { d() {} get e() { return 1 } #f() {} }\nfunction g() { function inner() {} }\ntype T = 1;",
    ).map((d) => d.name);
    expect(names).toEqual(["a", "b", "C", "d", "e", "f", "g", "T"]);
  });
});

describe("docs/architecture.md's rule table is true line by line", () => {
  const rows = parseRuleTable(readFileSync(DOC, "utf8"));
  const core = all("governance");
  const adapters = [...all("plugin"), ...all("cli")];

  it("has rows", () => expect(rows.length).toBeGreaterThan(20));

  it.each(rows.map((r) => [r.rule.slice(0, 70), r] as const))("%s", (_, row) => {
    const { sources, links } = namedFiles(row.where);
    const files = sources.map((s) => {
      const hits = [...new Set([...core, ...adapters].map((d) => d.file).filter((f) => f === s || f.endsWith(`/${s}`)))];
      expect(hits.length, `${s} names no file (or more than one) in governance/, plugin/, cli/: ${hits.join(", ")}`).toBe(1);
      return hits[0] as string;
    });
    // Every row links the test that proves it, and the link is true.
    expect(links.filter((l) => /\.test\.ts$/.test(l)).length, "the row links no test").toBeGreaterThan(0);
    for (const link of links) expect(existsSync(resolve(REPO_ROOT, "docs", link)), `linked test ${link}`).toBe(true);
    const names = namedFunctions(row.where);
    expect(names.length, "the row names no function").toBeGreaterThan(0);
    // Each named function is declared in one of the files the row names: the rule lives where the table says.
    for (const name of names) {
      const where = [...core, ...adapters].filter((d) => d.name === name).map((d) => d.file);
      expect(
        where.some((f) => files.includes(f)),
        `\`${name}\` is not declared in ${files.join(", ") || "(no file named)"}; declared in ${where.join(", ") || "nowhere"}`,
      ).toBe(true);
    }
    // The core's functions are not declared again, under the same name, by an adapter (a method of the same name
    // that calls the core, as the runner's `transition`, is not a copy).
    for (const name of names.filter((n) => core.some((d) => d.name === n))) {
      const copies = adapters.filter((d) => d.name === name && d.kind === "top");
      expect(copies, `\`${name}\` is the core's; an adapter declares it too`).toEqual([]);
    }
  });
});
