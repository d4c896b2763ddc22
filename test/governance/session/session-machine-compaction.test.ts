import { describe, expect, it } from "vitest";
import { SAME_COMPACTION_MS } from "../../../governance/session/compaction-seen.ts";
import { HOUR, MINUTE, T0, makeRecord } from "../fixtures/records.ts";
import { run, sample } from "./machine-fixture.ts";

describe("compactedPending: the post-compaction reminder survives until a turn with a step ends", () => {
  it("summarize → idle before the next prompt keeps it; the next prompt's steps show it; their idle clears it", () => {
    const start = makeRecord();
    const c = run(
      [
        { type: "compacted", at: T0 + 1, trigger: "summarize" },
        { type: "idle", at: T0 + 2 },
      ],
      { start },
    );
    expect(c.record).toMatchObject({ state: "compacted", compactedPending: true, counters: { compactions: 1 } });
    const steps = run(
      [
        { type: "model_step", at: T0 + 10 },
        { type: "model_step", at: T0 + 11 },
      ],
      { start: c.record },
    );
    expect(steps.record).toMatchObject({ state: "between_turn", compactedPending: true });
    const done = run([{ type: "idle", at: T0 + 12 }], { start: steps.record });
    expect(done.record.compactedPending).toBe(false);
    expect(done.record.compactionHistory).toEqual([{ at: T0 + 1, trigger: "summarize" }]);
  });

  it("a second compaction inside a turn re-arms the reminder for the next turn", () => {
    const { record } = run(
      [
        { type: "compacted", at: T0 + 1, trigger: "auto" },
        { type: "model_step", at: T0 + 2 },
        { type: "compacted", at: T0 + MINUTE, trigger: "auto" },
        { type: "idle", at: T0 + MINUTE + 1 },
      ],
      { start: makeRecord() },
    );
    expect(record).toMatchObject({ state: "compacted", compactedPending: true, counters: { compactions: 2 } });
  });

  it.each([
    ["the autocontinue hook, then session.compacted", "auto", "summarize"],
    ["session.compacted, then the autocontinue hook", "summarize", "auto"],
  ] as const)("one compaction signalled twice (%s) is counted once, as auto", (_, first, second) => {
    const { record } = run(
      [
        { type: "compacted", at: T0 + 1, trigger: first },
        { type: "compacted", at: T0 + 2, trigger: second },
      ],
      { start: makeRecord() },
    );
    expect(record.compactionHistory).toEqual([{ at: T0 + 1, trigger: "auto" }]);
    expect(record.counters.compactions).toBe(1);
  });

  it("a user's summarize right after another is a new compaction; so is any signal 30 s after the last", () => {
    const { record } = run(
      [
        { type: "compacted", at: T0 + 1, trigger: "summarize" },
        { type: "compacted", at: T0 + 2, trigger: "summarize" },
        { type: "compacted", at: T0 + 2 + SAME_COMPACTION_MS, trigger: "summarize" },
        { type: "compacted", at: T0 + 2 + 2 * SAME_COMPACTION_MS, trigger: "auto" },
      ],
      { start: makeRecord() },
    );
    expect(record.counters.compactions).toBe(4);
  });

  it("a tool call counts as a step (a tool call always follows a model request)", () => {
    const { record } = run([{ type: "compacted", at: T0 + 1, trigger: "auto" }, sample.tool_before, sample.idle], { start: makeRecord() });
    expect(record).toMatchObject({ state: "between_turn", compactedPending: false });
  });

  it("the resume context likewise stays until the first turn after the resume ends", () => {
    const { record } = run(
      [
        { type: "first_seen", at: T0 + 2 * HOUR },
        { type: "idle", at: T0 + 2 * HOUR + 1 },
      ],
      { start: makeRecord() },
    );
    expect(record.state).toBe("resumed");
    expect(record.resume).not.toBeNull();
    const turn = run(
      [
        { type: "model_step", at: T0 + 3 * HOUR },
        { type: "idle", at: T0 + 3 * HOUR + 1 },
      ],
      { start: record },
    );
    expect(turn.record).toMatchObject({ state: "between_turn", resume: null });
  });
});
