import { describe, expect, it } from "vitest";
import { holdCeiling, loosenedPaths } from "../../../governance/config/ceiling-hold.ts";
import type { LayerSettings } from "../../../governance/config/layer-settings.ts";

const good: LayerSettings = { budgets: { agents: { capped: { toolCalls: 4 } } }, guard: { rootSessions: true }, delegation: { maxDepth: 2 } };

describe("a running process keeps the last good ceilings (issue 41 §3)", () => {
  it("the first read is taken as it is, whatever it says", () => {
    expect(holdCeiling(undefined, { settings: good, state: "file" })).toEqual({ settings: good, lastGood: good, kept: null });
    expect(holdCeiling(undefined, { settings: undefined, state: "missing" })).toEqual({ settings: undefined, lastGood: undefined, kept: null });
  });

  it("a file removed or broken after a good one: the good one stays", () => {
    expect(holdCeiling(good, { settings: undefined, state: "missing" })).toEqual({ settings: good, lastGood: good, kept: { why: "missing", paths: [] } });
    expect(holdCeiling(good, { settings: undefined, state: "broken" }).kept?.why).toBe("broken");
  });

  it("rootSessions turned off, a cap raised or removed, log-only: loosened, the good one stays", () => {
    const loosened = holdCeiling(good, { settings: { ...good, guard: { rootSessions: false } }, state: "file" });
    expect(loosened).toMatchObject({ settings: good, kept: { why: "loosened", paths: ["guard.rootSessions"] } });
    expect(loosenedPaths(good, { ...good, budgets: { agents: { capped: { toolCalls: 40 } } } })).toEqual(["budgets.agents.capped.toolCalls"]);
    expect(loosenedPaths(good, { guard: { rootSessions: true }, delegation: { maxDepth: 2 } })).toEqual(["budgets"]);
    expect(loosenedPaths({ enforcement: "enforce" }, { enforcement: "log-only" })).toEqual(["enforcement"]);
    expect(loosenedPaths({ agents: { a: { mayDelegateTo: ["x"] } } }, { agents: { a: { mayDelegateTo: ["x", "y"] } } })).toEqual(["agents.a.mayDelegateTo"]);
  });

  it("a file that only tightens (or changes where telemetry goes) is taken at once", () => {
    const tighter: LayerSettings = { ...good, budgets: { agents: { capped: { toolCalls: 2 } }, default: { toolCalls: 50 } }, delegation: { maxDepth: 1 } };
    expect(holdCeiling(good, { settings: tighter, state: "file" })).toEqual({ settings: tighter, lastGood: tighter, kept: null });
    expect(loosenedPaths({ ...good, telemetry: { enabled: true } }, { ...good, telemetry: { enabled: false } })).toEqual([]);
  });
});
