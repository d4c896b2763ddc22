import { describe, expect, it } from "vitest";
import type { InjectDirective } from "../../../governance/stop/directive-queue.ts";
import { type BudgetNotices, planDelivery, type RenderedNote } from "../../../governance/stop/delivery-plan.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { STOP_HEADINGS } from "../../../governance/texts/stop-directives.ts";
import { SECOND, T0, makeChildRecord } from "../fixtures/records.ts";

/**
 * What a tool result carries, and in which order, is one plan (issue 29 item 2): `planDelivery` places the budget
 * guards' notices, parent notes, the stop level or the guidance, the spawn note and the tool's own output. Each row
 * gives what is pending and the order the session reads it in, top to bottom.
 */

type Part = "stand-down" | "budget" | "loop" | "note" | "L1" | "L2" | "L3" | "guidance" | "spawn" | "output";
type Row = {
  pending: { stop?: 1 | 2 | 3; guidance?: boolean; note?: boolean; spawn?: boolean; budget?: boolean; loop?: boolean; standDown?: boolean };
  reads: Part[] | "unchanged";
};

const MARK: Record<Exclude<Part, "L1" | "L2" | "L3">, string> = {
  "stand-down": "[stand-down notice]",
  budget: "[budget notice]",
  loop: "[loop notice]",
  note: "[parent note]",
  guidance: "[guidance text]",
  spawn: "[spawn note]",
  output: "[tool output]",
};

const TABLE: Row[] = [
  { pending: {}, reads: "unchanged" },
  { pending: { spawn: true }, reads: ["spawn", "output"] },
  { pending: { loop: true }, reads: ["loop", "output"] },
  { pending: { budget: true, loop: true, standDown: true }, reads: ["stand-down", "budget", "loop", "output"] },
  { pending: { note: true }, reads: ["note", "output"] },
  { pending: { guidance: true }, reads: ["guidance", "output"] },
  { pending: { guidance: true, spawn: true }, reads: ["guidance", "spawn", "output"] },
  { pending: { guidance: true, note: true, budget: true, spawn: true }, reads: ["budget", "note", "guidance", "spawn", "output"] },
  { pending: { stop: 1 }, reads: ["L1", "output"] },
  { pending: { stop: 1, spawn: true, guidance: true }, reads: ["L1", "spawn", "output"] },
  { pending: { stop: 2, spawn: true }, reads: ["L2"] },
  { pending: { stop: 3, guidance: true }, reads: ["L3"] },
  { pending: { stop: 1, loop: true, note: true }, reads: ["loop", "note", "L1", "output"] },
  { pending: { stop: 2, budget: true, loop: true, note: true, spawn: true, standDown: true }, reads: ["stand-down", "budget", "loop", "note", "L2"] },
];

function plan(p: Row["pending"]) {
  const child = makeChildRecord();
  const record = p.stop ? startStop(child, { requestId: "stop_1", at: T0, level: p.stop, reason: "enough", by: "cli", deadlineMs: 5 * SECOND }).next : child;
  const injects: InjectDirective[] = p.guidance ? [{ kind: "inject", id: "i1", at: T0, text: MARK.guidance, by: "cli" }] : [];
  const notes: RenderedNote[] = p.note ? [{ directiveId: "n1", rendered: { ok: true, text: MARK.note } }] : [];
  const notices: BudgetNotices = {
    standDown: p.standDown ? MARK["stand-down"] : null,
    budget: p.budget ? [MARK.budget] : [],
    loop: p.loop ? MARK.loop : null,
  };
  return planDelivery(record, {
    injects,
    notes,
    output: MARK.output,
    spawnNote: p.spawn ? MARK.spawn : undefined,
    notices,
    at: T0 + SECOND,
    maxLength: 500,
    seal: "seal:0123456789abcdef",
  });
}

/** The parts found in the text, in the order they appear. */
function partsOf(text: string): Part[] {
  const found: [number, Part][] = [];
  for (const [part, mark] of Object.entries(MARK) as [Part, string][]) if (text.includes(mark)) found.push([text.indexOf(mark), part]);
  for (const level of [1, 2, 3] as const) if (text.includes(STOP_HEADINGS[level])) found.push([text.indexOf(STOP_HEADINGS[level]), `L${level}`]);
  return found.sort((a, b) => a[0] - b[0]).map(([, part]) => part);
}

describe("the tool-result plan: what a result carries, top to bottom", () => {
  it.each(TABLE.map((row) => [JSON.stringify(row.pending), row] as const))("%s", (_, row) => {
    const out = plan(row.pending).output;
    if (row.reads === "unchanged") expect(out).toBeUndefined();
    else expect(partsOf(out ?? "")).toEqual(row.reads);
  });

  it("every part is separated by a blank line, each once", () => {
    const out = plan({ budget: true, loop: true, standDown: true, note: true, spawn: true }).output ?? "";
    expect(out).toBe([MARK["stand-down"], MARK.budget, MARK.loop, MARK.note, MARK.spawn, MARK.output].join("\n\n"));
  });
});
