import { describe, expect, it } from "vitest";
import type { Effect } from "../../../governance/session/effects.ts";
import type { InjectDirective } from "../../../governance/stop/directive-queue.ts";
import { planDelivery, type RenderedNote } from "../../../governance/stop/delivery-plan.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { SECOND, T0, makeChildRecord } from "../fixtures/records.ts";

const inject = (id: string, text: string): InjectDirective => ({ kind: "inject", id, at: T0, text, by: "cli" });
const note = (id: string, text: string): RenderedNote => ({ directiveId: id, rendered: { ok: true, text } });
const audits = (effects: Effect[]): Record<string, unknown>[] => effects.flatMap((e) => (e.type === "audit" ? [{ event: e.event, ...e.data }] : []));
const base = { output: "OUT", at: T0 + SECOND, maxLength: 500, seal: "seal:0123456789abcdef" };
const stopping = () => startStop(makeChildRecord(), { requestId: "stop_1", at: T0, level: 1, reason: "enough", by: "cli", deadlineMs: 5 * SECOND }).next;

describe("planDelivery: what one tool result carries", () => {
  it("nothing pending leaves the output alone", () => {
    const plan = planDelivery(makeChildRecord(), { ...base, injects: [], notes: [] });
    expect(plan.output).toBeUndefined();
    expect(plan.effects).toEqual([]);
  });

  it("all pending guidance at once, in order, fenced before the output; one audit line per delivered text", () => {
    const plan = planDelivery(makeChildRecord(), { ...base, injects: [inject("i1", "first"), inject("i2", "second")], notes: [] });
    expect(plan.output!.indexOf("first")).toBeLessThan(plan.output!.indexOf("second"));
    expect(plan.output!.endsWith("OUT")).toBe(true);
    expect(audits(plan.effects).map((a) => [a.event, a.injectId])).toEqual([
      ["session_injected", "i1"],
      ["session_injected", "i2"],
    ]);
  });

  it("guidance an agent sent (a primary's governance tool) is never shown as the user's (issue 27)", () => {
    const fromAgent: InjectDirective = { kind: "inject", id: "a1", at: T0, text: "push to main", by: "agent:build" };
    const plan = planDelivery(makeChildRecord(), { ...base, injects: [inject("u1", "from the user"), fromAgent], notes: [] });
    const out = plan.output ?? "";
    expect(out).toMatch(/^📝 USER GUIDANCE/);
    expect(out).toContain("📝 AGENT GUIDANCE (relayed from agent build, NOT from the user");
    expect(out.indexOf("push to main")).toBeGreaterThan(out.indexOf("AGENT GUIDANCE"));
    expect(out.slice(0, out.indexOf("AGENT GUIDANCE"))).not.toContain("push to main");
  });

  it("stop wins over inject: the ladder level is delivered, the guidance dropped and audited as dropped, never as injected", () => {
    const plan = planDelivery(stopping(), { ...base, injects: [inject("i1", "keep going")], notes: [] });
    expect(plan.output).toMatch(/^⚠️ SESSION STOP REQUESTED/);
    expect(plan.output).not.toContain("keep going");
    expect(plan.next?.stop?.delivered).toEqual([1]);
    const lines = audits(plan.effects);
    expect(lines.find((a) => a.event === "inject_dropped")).toMatchObject({ injectIds: ["i1"], because: "stop wins over inject" });
    expect(lines.some((a) => a.event === "session_injected")).toBe(false);
  });

  it("guidance that no longer validates at delivery (only invisible characters) is dropped with its reason, not reported injected", () => {
    const plan = planDelivery(makeChildRecord(), { ...base, injects: [inject("i1", "\u200b\u200b"), inject("i2", "fine")], notes: [] });
    expect(plan.output).toContain("fine");
    const lines = audits(plan.effects);
    expect(lines.map((a) => [a.event, a.injectIds ?? a.injectId])).toEqual([
      ["inject_dropped", ["i1"]],
      ["session_injected", "i2"],
    ]);
  });

  it("notes first: before the stop directive, before guidance; a note that does not check out is audited, not shown", () => {
    const bad: RenderedNote = { directiveId: "n2", rendered: { ok: false, reason: "not a child" } };
    const plan = planDelivery(stopping(), { ...base, injects: [], notes: [note("n1", "CHILD WAS STOPPED"), bad] });
    expect(plan.output).toMatch(/^CHILD WAS STOPPED\n\n⚠️ SESSION STOP REQUESTED/);
    expect(audits(plan.effects)[0]).toMatchObject({ event: "directive_rejected", directiveId: "n2", reason: "not a child" });
    const onlyNote = planDelivery(makeChildRecord(), { ...base, injects: [], notes: [note("n1", "NOTE")] });
    expect(onlyNote.output).toBe("NOTE\n\nOUT");
  });
});
