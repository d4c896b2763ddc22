import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * Issue 9's rule as a test: plugin/ changes a record only through the core's step functions. The one writer is
 * plugin/sessions/session-runtime.ts (it calls `store.update` with a machine transition or a step of governance/); every
 * other plugin file goes through `runner.step(id, fn)` / `runner.dispatch(id, event)`, where `fn` must call a step
 * imported from governance/ and must not build a record itself (no object spread, no `store.update`).
 */

const WRITER = "plugin/sessions/session-runtime.ts";
const WRITE_METHODS = new Set(["update", "write", "writeRecord"]);

type Source = { file: string; text: string };

function pluginSources(dir = join(REPO_ROOT, "plugin")): Source[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return pluginSources(full);
    return e.name.endsWith(".ts") ? [{ file: relative(REPO_ROOT, full).split("\\").join("/"), text: readFileSync(full, "utf8") }] : [];
  });
}

/** Names bound by imports from governance/ (`import { closeChild } from "../governance/…"`). */
function governanceImports(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier) || !st.moduleSpecifier.text.includes("/governance/")) continue;
    const bindings = st.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) names.add(el.name.text);
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
  }
  return names;
}

function find(node: ts.Node, test: (n: ts.Node) => boolean): ts.Node[] {
  const out: ts.Node[] = [];
  const visit = (n: ts.Node) => {
    if (test(n)) out.push(n);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

const methodName = (call: ts.CallExpression) => (ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : undefined);

/** The runner's own `step(id, fn)` hands its caller's step on to the session runtime: that is not a new step. */
function passesOwnStep(call: ts.Node, name: string): boolean {
  let n: ts.Node | undefined = call.parent;
  while (n && !ts.isMethodDeclaration(n)) n = n.parent;
  return !!n && ts.isMethodDeclaration(n) && n.name.getText() === "step" && n.parameters.some((p) => p.name.getText() === name);
}

function recordChangeViolations(sources: readonly Source[]): string[] {
  const out: string[] = [];
  for (const s of sources) {
    const sf = ts.createSourceFile(s.file, s.text, ts.ScriptTarget.ES2022, true);
    const core = governanceImports(sf);
    const line = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart()).line + 1;
    for (const node of find(sf, ts.isCallExpression)) {
      const call = node as ts.CallExpression;
      const name = methodName(call);
      if (name && WRITE_METHODS.has(name) && s.file !== WRITER) out.push(`${s.file}:${line(call)} calls .${name}(): only ${WRITER} writes records`);
      if (name !== "step" || s.file === WRITER) continue;
      const fn = call.arguments[1];
      if (!fn) continue;
      if (ts.isIdentifier(fn)) {
        if (!core.has(fn.text) && !passesOwnStep(call, fn.text)) out.push(`${s.file}:${line(call)} steps with ${fn.text}, not a step of governance/`);
        continue;
      }
      if (!ts.isArrowFunction(fn) && !ts.isFunctionExpression(fn)) {
        out.push(`${s.file}:${line(call)} steps with something that is not a function of governance/`);
        continue;
      }
      if (find(fn, (n) => ts.isSpreadAssignment(n)).length > 0) out.push(`${s.file}:${line(call)} builds a record in a step (object spread)`);
      const calls = find(fn.body, ts.isCallExpression) as ts.CallExpression[];
      if (!calls.some((c) => ts.isIdentifier(c.expression) && core.has(c.expression.text))) {
        out.push(`${s.file}:${line(call)} steps without calling a step function imported from governance/`);
      }
    }
  }
  return out;
}

describe("the check catches what it claims to", () => {
  const src = (file: string, text: string): Source => ({ file, text });
  it("flags ad-hoc record changes", () => {
    const bad = [
      src("plugin/a.ts", "await gov.update(id, (r) => (r ? { ...r, agent } : r));"),
      src("plugin/b.ts", "await this.store.update(id, fn);"),
      src(
        "plugin/c.ts",
        'import { closeChild } from "../governance/session/child-links.ts";\nawait runner.step(id, (r) => ({ next: { ...closeChild(r, c, "completed", 1).next, agent }, effects: [] }));',
      ),
      src("plugin/d.ts", "await runner.step(id, (r) => ({ next: r, effects: [] }));"),
      src("plugin/e.ts", "const mine = (r) => r;\nawait runner.step(id, mine);"),
    ];
    expect(recordChangeViolations(bad)).toHaveLength(bad.length);
  });

  it("lets steps of governance/ through", () => {
    const ok = [
      src(
        "plugin/a.ts",
        'import { closeChild } from "../governance/session/child-links.ts";\nawait runner.step(p, (r) => closeChild(r, id, "completed", at));',
      ),
      src(
        "plugin/b.ts",
        'import { startStop } from "../governance/stop/stop-ladder.ts";\nawait runner.step(id, (r) => (r ? startStop(r, req) : { next: r, effects: [] }));',
      ),
      src(WRITER, "await this.store.update(id, (c) => c);"),
    ];
    expect(recordChangeViolations(ok)).toEqual([]);
  });
});

describe("plugin/", () => {
  const sources = pluginSources();
  it("finds the plugin's sources", () => {
    expect(sources.some((s) => s.file === WRITER)).toBe(true);
  });

  it("changes records only through the core's step functions", () => {
    expect(recordChangeViolations(sources)).toEqual([]);
  });

  it("keeps every file at most ~200 lines", () => {
    const big = sources.filter((s) => s.text.split("\n").length > 210).map((s) => s.file);
    expect(big).toEqual([]);
  });
});
