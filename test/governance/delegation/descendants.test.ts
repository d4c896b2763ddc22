import { describe, expect, it } from "vitest";
import { cutOffWork, descendantsOf, isCutOff, planCascade } from "../../../governance/delegation/descendants.ts";
import type { ChildLink, SessionRecord } from "../../../governance/session/session-record.ts";
import { makeRecord as baseAt } from "../helpers.ts";

const link = (sessionId: string, outcome: ChildLink["outcome"] = "running"): ChildLink => ({
  sessionId,
  agent: "a",
  createdAt: 0,
  closedAt: outcome === "running" ? null : 1,
  outcome,
});
const rec = (id: string, over: Partial<SessionRecord> = {}) => baseAt(id, 0, over);
const ROOT = "ses_root0000000000000000";
const makeRecord = (over: Partial<SessionRecord> = {}) => baseAt(ROOT, 0, over);
const byId = (...records: SessionRecord[]) => new Map(records.map((r) => [r.sessionId, r]));

describe("descendants: one pure answer for the plugin and the CLI", () => {
  const A = "ses_aaaaaaaaaaaaaaaaaaaaaaaa";
  const B = "ses_bbbbbbbbbbbbbbbbbbbbbbbb";
  const C = "ses_cccccccccccccccccccccccc";
  const D = "ses_dddddddddddddddddddddddd";

  it("walks in tree order, skips unknown ids, and survives a cycle", () => {
    const root = makeRecord({ children: [link(A), link("ses_unknown00000000000000")] });
    const a = rec(A, { children: [link(B)] });
    const b = rec(B, { children: [link(root.sessionId), link(A)] });
    expect(descendantsOf(root, byId(a, b)).map((d) => d.record.sessionId)).toEqual([A, B]);
  });

  it.each([
    ["a running link", link(A), {}, true],
    ["a link closed as aborted", link(A, "aborted"), {}, true],
    ["an interrupted record", link(A, "completed"), { state: "interrupted" as const }, true],
    // Stopped by the user, honoured, its task returned: the parent has its answer and the stop note (issue 39 walk).
    ["a stopped record whose task returned", link(A, "completed"), { control: "stopped" as const }, false],
    // Hard-stopped (its task aborted, its record interrupted by the abort) in a turn its parent then finished: the
    // parent has the stop note; the stop was a decision, not an interruption (second issue 39 walk).
    ["a stopped record whose task its hard stop aborted", link(A, "aborted"), { control: "stopped" as const, state: "interrupted" as const }, false],
    ["a stopped record whose link still runs", link(A), { control: "stopped" as const }, true],
    ["a completed task", link(A, "completed"), {}, false],
    ["an orphaned link", link(A, "orphaned"), {}, false],
  ])("%s is cut off: %s", (_name, l, over, cut) => {
    expect(isCutOff({ link: l, record: rec(A, over) })).toBe(cut);
  });

  it("cutOffWork reports the cut-off ones with their last tool call, stopped as stopped", () => {
    const root = makeRecord({ children: [link(A), link(C, "completed")] });
    // B's stop ended it while its task was still out (the link still running when A was cut off).
    const a = rec(A, { lastToolCall: { tool: "read", summary: "read x", at: 5, callId: "c" }, children: [link(B), link(D, "aborted")] });
    const b = rec(B, { control: "stopped" });
    // D was hard-stopped earlier and A was told: not interrupted work.
    const d = rec(D, { control: "stopped", state: "interrupted" });
    const work = cutOffWork(root, byId(a, b, rec(C), d));
    expect(work.map((w) => [w.sessionId, w.state, w.lastToolCall?.summary ?? null])).toEqual([
      [A, a.state, "read x"],
      [B, "stopped", null],
    ]);
  });

  it("planCascade takes every running link of the subtree whose task did not complete", () => {
    const root = makeRecord({ children: [link(A), link(C)] });
    const a = rec(A, { children: [link(B)] });
    expect(planCascade(root, byId(a, rec(B), rec(C, { control: "completed" }))).map((d) => d.record.sessionId)).toEqual([A, B]);
  });
});
