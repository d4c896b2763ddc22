import { describe, expect, it } from "vitest";
import { freshRecord, type SessionRecord } from "../../../governance/session/session-record.ts";
import { type Replay, SoftChanges } from "../../../plugin/sessions/soft-changes.ts";

const ID = "ses_softchanges00000000000001";
const record = (): SessionRecord => freshRecord(ID, 1_764_000_000_000, "build", { parentId: null, rootId: ID, depth: 0, level: 1 })!;
/** A soft change that counts a tool call, and how often it was applied. */
function counted() {
  let calls = 0;
  const replay: Replay = (r) => {
    calls++;
    return r && { ...r, counters: { ...r.counters, toolCalls: r.counters.toolCalls + 1 } };
  };
  return { replay, calls: () => calls };
}

describe("soft changes waiting to be written (issue 31)", () => {
  it("written on the very record they were applied to, the view is taken as it is: nothing is applied twice", () => {
    const soft = new SoftChanges();
    const base = record();
    const c = counted();
    let view = base;
    for (let i = 0; i < 3; i++) {
      view = c.replay(view)!;
      soft.add(ID, base, view, c.replay);
    }
    expect(c.calls()).toBe(3);
    expect(soft.take(ID)(base)).toBe(view);
    expect(c.calls()).toBe(3);
  });

  it("on a record someone else wrote, they are replayed in order on it", () => {
    const soft = new SoftChanges();
    const base = record();
    const c = counted();
    soft.add(ID, base, c.replay(base)!, c.replay);
    soft.add(ID, base, c.replay(soft.view(ID))!, c.replay);
    const theirs = { ...base, title: "renamed elsewhere", counters: { ...base.counters, toolCalls: 10 } };
    const written = soft.take(ID)(theirs);
    expect(written?.title).toBe("renamed elsewhere");
    expect(written?.counters.toolCalls).toBe(12);
  });

  it("changes queued during a write stand on what was stored: the next write takes their view again", () => {
    const soft = new SoftChanges();
    const base = record();
    const c = counted();
    soft.add(ID, base, c.replay(base)!, c.replay);
    const write = soft.take(ID);
    soft.add(ID, soft.view(ID)!, c.replay(soft.view(ID))!, c.replay); // arrives while the write is under way
    const stored = structuredClone(write(base)!); // the store's own copy of what it wrote
    soft.settle(ID, stored);
    expect(soft.view(ID)?.counters.toolCalls).toBe(2);
    const before = c.calls();
    expect(soft.take(ID)(stored)).toBe(soft.view(ID));
    expect(c.calls()).toBe(before);
    soft.settle(ID, stored);
    expect(soft.has(ID)).toBe(false);
  });
});
