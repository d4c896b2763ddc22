import { describe, expect, it } from "vitest";
import { LoopConfig } from "../../../governance/config/budget-config.ts";
import type { LoopState } from "../../../governance/budget/loop-guard.ts";
import { loopKeyFor, watchLoop } from "../../../governance/budget/loop-watch.ts";
import type { ControlStatus } from "../../../governance/session/session-record.ts";
import { LOOP_NOTICE_HEADING } from "../../../governance/budget/budget-notices.ts";

/** Whom the loop guard watches and what it asks for (issue 29 item 2: decided in the core, not in plugin/budget/). */
const cfg = LoopConfig.parse({});
const key = (at: number) => loopKeyFor(cfg, { tool: "bash", args: { command: "npm test" }, at, cwd: "/p" });

function calls(n: number, control: (i: number) => ControlStatus | undefined = () => "active") {
  let state: LoopState | undefined;
  const out = [];
  for (let i = 0; i < n; i++) {
    const at = 1_000_000 + i * 1_000;
    const w = watchLoop(state, { control: control(i), call: key(at), tool: "bash", output: "1 failing", at: at + 50 }, cfg);
    state = w.next;
    out.push(w);
  }
  return out;
}

describe("watchLoop", () => {
  it("the same call with the same result: a notice on the third, then a stop by governance with its own id and reason", () => {
    const seen = calls(3 + cfg.stopAfter);
    expect(seen.slice(0, 2).every((w) => w.notice === null && w.stop === null && w.effects.length === 0)).toBe(true);
    expect(seen[2]?.notice).toContain(LOOP_NOTICE_HEADING);
    expect(seen[2]?.effects).toEqual([
      { type: "audit", event: "loop_detected", data: { tool: "bash", shape: "repeat", count: 3, period: 1, stage: "notice" } },
    ]);
    const last = seen.at(-1);
    expect(last?.stop?.id).toMatch(/^loop-repeat-\d+$/);
    expect(last?.stop?.reason.length).toBeGreaterThan(0);
    expect(last?.effects[0]).toMatchObject({ event: "loop_detected", data: { stage: "stop" } });
  });

  it("only a session at work is watched: a stopping or stopped session's calls neither count nor move its memory", () => {
    for (const control of ["stopping", "stopped", "completed", undefined] as const) {
      const seen = calls(6, () => control);
      expect(seen.every((w) => w.next === undefined && w.notice === null && w.stop === null && w.effects.length === 0)).toBe(true);
    }
    // Three calls at work, then three while stopping: the stopping ones are not counted (no notice at the fourth).
    const mixed = calls(6, (i) => (i < 2 ? "active" : "stopping"));
    expect(mixed.every((w) => w.notice === null)).toBe(true);
  });

  it("a call whose start was not keyed (guards off when it began) is not counted; guards off key nothing", () => {
    expect(loopKeyFor(LoopConfig.parse({ enabled: false }), { tool: "bash", args: {}, at: 1 })).toBeUndefined();
    const w = watchLoop(undefined, { control: "active", call: undefined, tool: "bash", output: "x", at: 1 }, cfg);
    expect(w).toEqual({ next: undefined, effects: [], notice: null, stop: null });
  });
});
