import { describe, expect, it } from "vitest";
import { LoopConfig } from "../../../governance/budget/budget-config.ts";
import { type LoopState, type LoopVerdict, NEW_LOOP_STATE, observeCall } from "../../../governance/budget/loop-guard.ts";

const cfg = LoopConfig.parse({});
function run(observations: string[], config = cfg): LoopVerdict["kind"][] {
  let s: LoopState = NEW_LOOP_STATE;
  return observations.map((o) => {
    const r = observeCall(s, o, config);
    s = r.next;
    return r.verdict.kind;
  });
}

describe("loop guard", () => {
  it("same call, same result: notice at the 3rd, stop 2 calls later, once", () => {
    expect(run(["a", "a", "a", "a", "a", "a", "a"])).toEqual(["none", "none", "notice", "none", "stop", "none", "none"]);
  });
  it("a progressing poll (same call, changing result) never trips it", () => {
    expect(run(["poll|10%", "poll|20%", "poll|30%", "poll|40%", "poll|50%", "poll|60%"]).every((k) => k === "none")).toBe(true);
  });
  it("A-B-A-B with unchanged results: notice after 2 cycles, stop after 2 more calls", () => {
    expect(run(["a", "b", "a", "b", "a", "b"])).toEqual(["none", "none", "none", "notice", "none", "stop"]);
  });
  it("A-B-A-B whose results change is progress", () => {
    expect(run(["a1", "b1", "a2", "b2", "a3", "b3"]).every((k) => k === "none")).toBe(true);
  });
  it("a different call after the notice resets the guard", () => {
    expect(run(["a", "a", "a", "c", "a", "a", "a"])).toEqual(["none", "none", "notice", "none", "none", "none", "notice"]);
  });
  it("off when disabled; N is configurable", () => {
    expect(run(["a", "a", "a", "a", "a"], { ...cfg, enabled: false }).every((k) => k === "none")).toBe(true);
    expect(run(["a", "a", "a", "a", "a"], { ...cfg, repeat: 5 })).toEqual(["none", "none", "none", "none", "notice"]);
  });
});
