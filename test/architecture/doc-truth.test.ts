import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.ts";
import { Directive } from "../../governance/stop/directive-queue.ts";
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

/**
 * Issue 42: the docs drifted from the tree where no test looked — three links of docs/security.md named test files
 * that had moved, docs/architecture.md listed seven of the CLI's ten commands and three of the scripts, and the
 * glossary three of the four directive kinds. Each list is now checked against what it lists.
 */
describe("the docs match the tree", () => {
  const markdown = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? markdown(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
    );
  const docs = ["README.md", ...markdown("docs")];
  const read = (file: string) => readFileSync(join(REPO_ROOT, file), "utf8");
  const withoutFences = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  /** What a reader follows: code (fenced or inline) shows syntax, it links nowhere. */
  const prose = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, "");

  /** The anchors GitHub gives a file's headings (github-slugger: lower case, punctuation dropped, a space a hyphen, repeats numbered). */
  function anchorsOf(file: string): Set<string> {
    const text = withoutFences(read(file));
    const seen = new Map<string, number>();
    const out = new Set<string>();
    for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
      const plain = (m[1] as string).replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1");
      const slug = plain
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
        .replace(/ /g, "-");
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      out.add(n ? `${slug}-${n}` : slug);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1] as string);
    return out;
  }

  it("every relative link in README.md and docs/ names a file that exists, and a heading of it where it names one", () => {
    const dead: string[] = [];
    let checked = 0;
    for (const file of docs) {
      for (const m of prose(read(file)).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const href = m[1] as string;
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
        const [path = "", anchor] = href.split("#");
        const target = path === "" ? file : relative(REPO_ROOT, join(REPO_ROOT, dirname(file), decodeURI(path)));
        checked++;
        if (!existsSync(join(REPO_ROOT, target))) dead.push(`${file}: ${href} (no such file)`);
        else if (anchor && target.endsWith(".md") && !anchorsOf(target).has(decodeURIComponent(anchor))) dead.push(`${file}: ${href} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(dead).toEqual([]);
  });

  /** The commands the CLI's own help lists (what a user reads), checked against the table main.ts dispatches on. */
  async function cliCommands(): Promise<string[]> {
    let help = "";
    await main(["--help"], { out: (s) => (help += s), err: () => undefined });
    const section = help.split("Commands:\n")[1]?.split("\n\n")[0] ?? "";
    return [...new Set([...section.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1] as string))];
  }

  it("the CLI's help lists every command main.ts runs, and no other", async () => {
    const source = read("cli/main.ts");
    const table = source.match(/const COMMANDS[^=]*= \{([^}]*)\}/)?.[1] ?? "";
    const dispatched = [...table.matchAll(/^\s*([a-z]+):/gm), ...source.matchAll(/\bif \(command === "([a-z]+)"\)/g)].map((m) => m[1] as string);
    expect(dispatched.length).toBeGreaterThan(5);
    expect((await cliCommands()).sort()).toEqual([...new Set(dispatched)].sort());
  });

  it("docs/architecture.md's cli/ line, docs/cli.md's headings and README.md's command table name every CLI command", async () => {
    const listed =
      read("docs/architecture.md")
        .match(/`opencode-governance ([a-z|]+)`/)?.[1]
        ?.split("|") ?? [];
    const headings = read("docs/cli.md")
      .split("\n")
      .filter((l) => /^#{2,3} /.test(l))
      .flatMap((l) => [...l.matchAll(/`([a-z]+)[ `]/g)].map((m) => m[1] as string));
    const commands = await cliCommands();
    expect(listed.sort()).toEqual([...commands].sort());
    expect(commands.filter((c) => !headings.includes(c))).toEqual([]);
    const readmeRows = [...read("README.md").matchAll(/^\| `opencode-governance ([a-z]+)/gm)].map((m) => m[1] as string);
    expect(commands.filter((c) => !readmeRows.includes(c))).toEqual([]);
  });

  it("docs/architecture.md's scripts/ entry names every file and folder of scripts/ and every npm script that runs one", () => {
    const lines = read("docs/architecture.md").split("\n");
    const start = lines.findIndex((l) => l.startsWith("scripts/ "));
    const end = lines.findIndex((l, i) => i > start && /^\S/.test(l));
    const entry = lines.slice(start, end).join("\n");
    const names = readdirSync(join(REPO_ROOT, "scripts"), { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
    expect(names.filter((n) => !entry.includes(n))).toEqual([]);
    const npmScripts = Object.entries(JSON.parse(read("package.json")).scripts as Record<string, string>)
      .filter(([, command]) => /\bscripts\//.test(command))
      .map(([name]) => name);
    expect(npmScripts.length).toBeGreaterThan(5);
    expect(npmScripts.filter((n) => !entry.includes(`\`npm run ${n}\``) && !entry.includes(`\`${n}\``))).toEqual([]);
  });

  it("docs/glossary.md names every directive kind in its directive row, and gives each a row of its own", () => {
    const kinds = Directive.options.map((o) => o.shape.kind.value);
    const glossary = read("docs/glossary.md");
    const row = glossary.split("\n").find((l) => l.startsWith("| **directive** |")) ?? "";
    expect(kinds.filter((k) => !row.includes(`\`${k}\``))).toEqual([]);
    expect(kinds.filter((k) => !new RegExp(`^\\| \\*\\*${k}\\*\\*`, "m").test(glossary))).toEqual([]);
  });
});
