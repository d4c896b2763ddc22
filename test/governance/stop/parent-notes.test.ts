import { describe, expect, it } from "vitest";
import { notesAtTurnEnd, notesOnStep, notesOnToolResult } from "../../../governance/stop/parent-notes.ts";

const ok = (id: string, text: string) => ({ directiveId: id, rendered: { ok: true as const, text } });

describe("parent notes: shown on every model step until a tool result carries them, once each", () => {
  it("a note claimed on a step stays pending and is shown again on the next step (a retry or the next request)", () => {
    const first = notesOnStep([], [ok("n1", "STOPPED")]);
    expect(first.show).toEqual(["STOPPED"]);
    const second = notesOnStep(first.pending, []);
    expect(second.show).toEqual(["STOPPED"]);
  });
  it("the same directive claimed twice (two processes, a re-queued claim) is shown once", () => {
    const step = notesOnStep([{ directiveId: "n1", text: "STOPPED" }], [ok("n1", "STOPPED"), ok("n2", "OTHER")]);
    expect(step.show).toEqual(["STOPPED", "OTHER"]);
  });
  it("a tool result carries the pending notes first, then new ones; nothing is pending after", () => {
    const { carry, pending } = notesOnToolResult([{ directiveId: "n1", text: "OLD" }], [ok("n1", "OLD"), ok("n2", "NEW")]);
    expect(carry.map((n) => n.directiveId)).toEqual(["n1", "n2"]);
    expect(pending).toEqual([]);
  });
  it("a note that does not check out is audited on the step, never pending", () => {
    const step = notesOnStep([], [{ directiveId: "n1", rendered: { ok: false, reason: "no record" } }]);
    expect(step.pending).toEqual([]);
    expect(step.effects[0]).toMatchObject({ event: "directive_rejected" });
  });
  it("the turn's end delivers the notes its steps showed: their ids are claimed, nothing stays owed for a later turn", () => {
    const shown = notesOnStep([], [ok("n1", "STOPPED"), ok("n2", "OTHER")]);
    const end = notesAtTurnEnd(shown.pending);
    expect(end.delivered).toEqual(["n1", "n2"]);
    expect(notesOnStep(end.pending, []).show).toEqual([]);
    expect(notesAtTurnEnd([]).delivered).toEqual([]);
  });
});
