import { describe, expect, it } from "vitest";
import { MAX_TREE_INDENT, sessionTree } from "../../../governance/session/session-tree.ts";
import { MAX_TREE_LINES, renderTree } from "../../../governance/stop/control-requests.ts";
import { CHILD_ID, GRANDCHILD_ID, makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

const A = "ses_cyclea000000000000000000001";
const B = "ses_cycleb000000000000000000001";

describe("session tree walk (dashboard and `sessions`)", () => {
  it("orders parents before children, by creation time, with the walk's indent", () => {
    const rows = sessionTree([
      makeRecord({ sessionId: GRANDCHILD_ID, parentId: CHILD_ID, depth: 2, createdAt: T0 + 2 }),
      makeRecord({ sessionId: CHILD_ID, parentId: ROOT_ID, depth: 1, createdAt: T0 + 1 }),
      makeRecord({ sessionId: ROOT_ID }),
    ]);
    expect(rows.map((r) => [r.record.sessionId, r.indent, r.cycle])).toEqual([
      [ROOT_ID, 0, false],
      [CHILD_ID, 1, false],
      [GRANDCHILD_ID, 2, false],
    ]);
  });

  it("shows every member of a parent cycle exactly once, marked, and renders it as running", () => {
    const records = [
      makeRecord({ sessionId: A, parentId: B, depth: 1 }),
      makeRecord({ sessionId: B, parentId: A, depth: 1, createdAt: T0 + 1 }),
      makeRecord({ sessionId: ROOT_ID, parentId: ROOT_ID }),
    ];
    const rows = sessionTree(records);
    expect(rows.map((r) => r.record.sessionId).sort()).toEqual([A, B, ROOT_ID].sort());
    expect(rows.filter((r) => r.cycle).map((r) => r.record.sessionId)).toEqual([A]);
    const lines = renderTree(records, { now: T0 });
    expect(lines).toHaveLength(3);
    expect(lines.join("\n")).toContain(A);
    expect(lines.join("\n")).toContain(B);
    expect(lines.find((l) => l.includes(A))).toContain("[parent cycle]");
  });

  it("an absurd stored depth or a long chain never drives the indent", () => {
    const chain = Array.from({ length: 5000 }, (_, i) =>
      makeRecord({
        sessionId: `ses_chain${String(i).padStart(21, "0")}`,
        parentId: i === 0 ? null : `ses_chain${String(i - 1).padStart(21, "0")}`,
        depth: i === 1 ? 1e9 : i,
        createdAt: T0 + i,
      }),
    );
    const rows = sessionTree(chain);
    expect(rows).toHaveLength(5000);
    expect(Math.max(...rows.map((r) => r.indent))).toBe(MAX_TREE_INDENT);
    const lines = renderTree(chain, { now: T0 });
    // Bounded, and the cut is said: a flood of records cannot push a listing past what a terminal or a model reads.
    expect(lines).toHaveLength(MAX_TREE_LINES + 1);
    expect(lines.at(-1)).toBe(`… ${5000 - MAX_TREE_LINES} more sessions not shown (at most ${MAX_TREE_LINES} lines; \`sessions --json\` lists every one)`);
    expect(lines[1]).toContain("depth 1000000000");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(300);
  });
});
