/**
 * docs/opencode-2.md's "The pinned contract" is held to the captures of the real 2.0.15 (test/fixtures/opencode-2.0.15/,
 * scripts/capture-opencode-2.ts): every capture is named by a row, every capture a row names exists, every key in its
 * "read" column is in the capture and every key in its "not sent" column is not. The Mapping's OpenCode 2 column names
 * only events 2.0.15 was captured sending (or ones the pinned contract marks as not captured).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT } from "../harness/paths.ts";

const DOC = fs.readFileSync(path.join(REPO_ROOT, "docs", "opencode-2.md"), "utf8");
const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "opencode-2.0.15");

function section(title: string): string {
  const start = DOC.indexOf(`## ${title}`);
  if (start < 0) throw new Error(`docs/opencode-2.md has no "## ${title}"`);
  const end = DOC.indexOf("\n## ", start + 3);
  return DOC.slice(start, end < 0 ? undefined : end);
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const cells = (row: string) => row.split(/(?<!\\)\|/).slice(1, -1);

/** The pinned-contract rows: capture names, keys read, keys not sent. */
const rows = section("The pinned contract")
  .split("\n")
  .filter((l) => l.startsWith("| ") && !l.startsWith("| fact") && !l.startsWith("|---"))
  .map(cells)
  .filter((c) => c.length === 4)
  .map(([fact, captures, read, absent]) => ({ fact: fact!.trim(), captures: ticked(captures!), read: ticked(read!), absent: ticked(absent!) }));

const fixture = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), "utf8"));
const has = (value: unknown, key: string): boolean => {
  let at: unknown = value;
  for (const part of key.split(".")) {
    if (!at || typeof at !== "object" || !(part in at)) return false;
    at = (at as Record<string, unknown>)[part];
  }
  return true;
};

describe("docs/opencode-2.md's pinned contract is the 2.0.15 captures", () => {
  test("the table has rows, and every capture in the fixtures is named by one", () => {
    expect(rows.length).toBeGreaterThan(15);
    const named = new Set(rows.flatMap((r) => r.captures));
    const files = fs.readdirSync(FIXTURES).map((f) => f.replace(/\.json$/, ""));
    expect(files.filter((f) => !named.has(f))).toEqual([]);
  });

  for (const row of rows)
    test(`${row.captures.join(", ")}: ${row.fact.slice(0, 70)}`, () => {
      expect(row.captures.length, "a row names its capture").toBeGreaterThan(0);
      for (const name of row.captures) {
        expect(fs.existsSync(path.join(FIXTURES, `${name}.json`)), `${name}.json captured`).toBe(true);
        const captured = fixture(name);
        expect(
          row.read.filter((k) => !has(captured, k)),
          `keys the row says are read, missing from ${name}`,
        ).toEqual([]);
        expect(
          row.absent.filter((k) => has(captured, k)),
          `keys the row says 2.0.15 does not send, present in ${name}`,
        ).toEqual([]);
      }
    });

  test("the Mapping's OpenCode 2 column names only events 2.0.15 was captured sending, or ones marked not captured", () => {
    const mapping = section("Mapping");
    const v2 = mapping
      .split("\n")
      .filter((l) => l.startsWith("| ") && !l.startsWith("|---"))
      .map((l) => cells(l)[2] ?? "");
    const events = new Set(v2.flatMap((c) => ticked(c)).filter((t) => /^session\.[a-z]+\.[a-z.]+$/.test(t) && !t.includes("(")));
    const notCaptured = new Set(["session.renamed", "session.reasoning.delta", "session.tool.input.delta"]);
    const missing = [...events].filter((e) => !fs.existsSync(path.join(FIXTURES, `event.${e}.json`)) && !notCaptured.has(e));
    expect(missing).toEqual([]);
    for (const e of [...notCaptured].filter((x) => mapping.includes(`\`${x}\``)))
      expect(mapping, `${e}: the Mapping says it is not captured`).toContain(`\`${e}\` (not captured`);
  });

  test("no sentence says an OpenCode 2 binary is out of reach", () => {
    expect(DOC).not.toMatch(/No OpenCode 2 binary is reachable/);
  });
});
