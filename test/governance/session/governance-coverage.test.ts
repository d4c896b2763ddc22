import { describe, expect, test } from "vitest";
import { type Coverage, type CoverageEvent, coverageLine, coverageStep, EMPTY_COVERAGE } from "../../../governance/session/governance-coverage.ts";

function run(events: CoverageEvent[], from: Coverage = EMPTY_COVERAGE): { c: Coverage; gaps: string[] } {
  let c = from;
  const gaps: string[] = [];
  for (const ev of events) {
    const r = coverageStep(c, ev);
    c = r.next;
    gaps.push(...r.gaps);
  }
  return { c, gaps };
}

const step = (prefixed = true): CoverageEvent[] => [...(prefixed ? ([{ type: "prefixed" }, { type: "noted" }] as CoverageEvent[]) : []), { type: "host_step" }];

describe("governance coverage (issue 25 item 5)", () => {
  test("every step with its prefix: no gap, and the line says so", () => {
    const { c, gaps } = run([...step(), ...step(), ...step()]);
    expect(gaps).toEqual([]);
    expect(coverageLine(c)).toBe("prefix on 3/3 steps, 0/0 tool calls gated, 0/0 children linked");
  });

  test("two host steps in a row without the prefix: one gap for the prefix and one for the status note", () => {
    const one = run([...step(), ...step(false)]);
    expect(one.gaps).toEqual([]);
    const two = run([...step(false)], one.c);
    expect(two.gaps).toEqual(["prefix", "status_note"]);
    // Reported once per session, not on every later step.
    expect(run([...step(false), ...step(false)], two.c).gaps).toEqual([]);
  });

  test("the prefix hook running but the note hook not: only the status note is missing", () => {
    const { gaps } = run([{ type: "prefixed" }, { type: "host_step" }, { type: "prefixed" }, { type: "host_step" }]);
    expect(gaps).toEqual(["status_note"]);
  });

  test("one step without a prefix (a compaction summary) between prefixed steps is not a gap", () => {
    expect(run([...step(), ...step(false), ...step(), ...step(false), ...step()]).gaps).toEqual([]);
  });

  test("host events handled late (after the hooks of later steps) are not a gap", () => {
    const hooks: CoverageEvent[] = [{ type: "prefixed" }, { type: "noted" }];
    expect(run([...hooks, ...hooks, ...hooks, { type: "host_step" }, { type: "host_step" }, { type: "host_step" }]).gaps).toEqual([]);
  });

  test("tool calls: two in a row the gate did not see are a gap; one is not", () => {
    expect(
      run([
        { type: "host_tool", gated: true },
        { type: "host_tool", gated: false },
        { type: "host_tool", gated: true },
      ]).gaps,
    ).toEqual([]);
    const r = run([
      { type: "host_tool", gated: false },
      { type: "host_tool", gated: false },
    ]);
    expect(r.gaps).toEqual(["tool_gate"]);
    expect(coverageLine(r.c)).toContain("0/2 tool calls gated");
  });

  test("a child the host reports that governance never linked is a gap at once", () => {
    expect(run([{ type: "host_child", linked: true }]).gaps).toEqual([]);
    const r = run([
      { type: "host_child", linked: true },
      { type: "host_child", linked: false },
    ]);
    expect(r.gaps).toEqual(["child_link"]);
    expect(coverageLine(r.c)).toContain("1/2 children linked");
  });

  test("a shell command that ran outside the sandbox is a gap at once, reported once per session", () => {
    expect(run([{ type: "shell_unconfined" }]).gaps).toEqual(["sandbox"]);
    expect(run([{ type: "shell_unconfined" }, { type: "shell_unconfined" }]).gaps).toEqual(["sandbox"]);
  });
});
