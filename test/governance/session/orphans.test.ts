import { describe, expect, it } from "vitest";
import { findOrphans, orphanedWhileAway } from "../../../governance/session/orphans.ts";
import type { SessionRecord } from "../../../governance/session/session-record.ts";
import { CHILD_ID, GRANDCHILD_ID, MINUTE, T0, makeChildRecord, makeLink, makeRecord } from "../fixtures/records.ts";

const STALE = 10 * MINUTE;
const notBusy = () => false;
const toolAt = (at: number) => ({ tool: "bash", callId: "c1", at, summary: "npm test" });
const find = (records: SessionRecord[], now: number, isBusy: (id: string) => boolean = notBusy, links = [makeLink()]) =>
  findOrphans(links, new Map(records.map((r) => [r.sessionId, r])), { now, staleMs: STALE, isBusy });

describe("findOrphans at the 10-minute boundary", () => {
  it("last tool call exactly 10 min ago: not stale; 10 min + 1 ms: orphan", () => {
    const child = makeChildRecord({ createdAt: T0 - MINUTE, lastToolCall: toolAt(T0) });
    expect(find([child], T0 + STALE)).toEqual([]);
    expect(find([child], T0 + STALE + 1)).toEqual([
      { sessionId: CHILD_ID, agent: "executor", createdAt: T0 - MINUTE, lastToolCall: toolAt(T0), since: T0, basis: "last_tool_call", staleForMs: STALE + 1 },
    ]);
  });

  it("no tool call yet: creation is the reference", () => {
    const child = makeChildRecord({ createdAt: T0 });
    expect(find([child], T0 + STALE)).toEqual([]);
    expect(find([child], T0 + STALE + 1)).toMatchObject([{ basis: "created", since: T0 }]);
  });

  it("no record at all: the link's createdAt is the reference", () => {
    expect(find([], T0 + STALE)).toEqual([]);
    expect(find([], T0 + STALE + 1)).toMatchObject([{ sessionId: CHILD_ID, basis: "created", agent: "executor" }]);
  });
});

it("a busy child is never an orphan, however long since its last tool call", () => {
  const child = makeChildRecord({ lastToolCall: toolAt(T0) });
  expect(find([child], T0 + 60 * MINUTE, (id) => id === CHILD_ID)).toEqual([]);
});

it("only children still running and active (or already ended orphaned by crash recovery) count", () => {
  const stale = T0 + 60 * MINUTE;
  for (const outcome of ["completed", "aborted", "failed", "orphaned"] as const) {
    expect(find([makeChildRecord()], stale, notBusy, [makeLink({ outcome })])).toEqual([]);
  }
  for (const control of ["stopping", "stopped", "completed"] as const) {
    expect(find([makeChildRecord({ control })], stale)).toEqual([]);
  }
});

it("reports each stale child in input order and leaves fresh ones", () => {
  const links = [makeLink(), makeLink({ sessionId: GRANDCHILD_ID, agent: "builder" })];
  const fresh = makeChildRecord({ sessionId: GRANDCHILD_ID, lastToolCall: toolAt(T0 + 55 * MINUTE) });
  const old = makeChildRecord({ lastToolCall: toolAt(T0) });
  expect(find([old, fresh], T0 + 60 * MINUTE, notBusy, links).map((o) => o.sessionId)).toEqual([CHILD_ID]);
});

it("children closed as orphaned while the parent was away (a sweep found their host gone) are the ones to tell it of", () => {
  const parent = makeRecord({
    children: [
      makeLink({ outcome: "orphaned", closedAt: T0 + 5 * MINUTE }),
      makeLink({ sessionId: GRANDCHILD_ID, outcome: "orphaned", closedAt: T0 - MINUTE }),
    ],
  });
  expect(orphanedWhileAway(parent, T0).map((l) => l.sessionId)).toEqual([CHILD_ID]);
  expect(orphanedWhileAway(parent, T0 + 6 * MINUTE)).toEqual([]);
});

it("a child crash recovery already ended orphaned, its link still running, is one at once (the link is left to close)", () => {
  const recovered = makeChildRecord({ control: "orphaned", lastToolCall: { tool: "read", callId: "c1", at: T0 - MINUTE, summary: "x" } });
  const found = findOrphans([makeLink()], new Map([[CHILD_ID, recovered]]), { now: T0, staleMs: 10 * MINUTE, isBusy: () => true });
  expect(found.map((o) => o.sessionId)).toEqual([CHILD_ID]);
});
