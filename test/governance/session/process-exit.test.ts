import { describe, expect, it } from "vitest";
import { leftRunning, readWronglyOrphaned, recoverCrashed } from "../../../governance/session/crash-recovery.ts";
import { closeLinkOnExit, releaseOnExit } from "../../../governance/session/process-exit.ts";
import { migrateRecord } from "../../../governance/session/record-migrations.ts";
import { sessionStatus } from "../../../governance/session/running.ts";
import { abortedBy } from "../../../governance/stop/stop-ladder.ts";
import { CHILD_ID, makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

const ME = { host: "box", pid: 4242, start: "100" };
const OTHER = { host: "box", pid: 5151, start: "200" };
const stop = (requestId: string, abortAttempts = 0) => ({
  requestId,
  requestedAt: T0,
  reason: "r",
  requestedBy: "cli",
  nextLevel: 1 as const,
  delivered: [],
  deadlineAt: T0 + 60_000,
  quietMs: null,
  capAt: null,
  abortAttempts,
  parentNotified: false,
});

describe("an ordinary exit releases what the process hosted (issue 26 item 1)", () => {
  it("an idle root keeps its state, is hosted by nobody, and stays idle; the audit says exit", () => {
    const idle = makeRecord({ hostedBy: ME, idleAt: T0 });
    const { next, effects } = releaseOnExit(idle, ME, T0 + 5);
    expect(next).toMatchObject({ state: "between_turn", control: "active", hostedBy: null });
    expect(sessionStatus(next!)).toBe("idle");
    expect(effects).toEqual([
      expect.objectContaining({ event: "session_released", data: expect.objectContaining({ cause: "exit", was: "idle", now: "idle", cutOff: false }) }),
    ]);
  });

  it("a turn under way is cut off: interrupted (resumable), never orphaned", () => {
    const busy = makeRecord({ hostedBy: ME, lastActivityAt: T0 + 3 });
    const next = releaseOnExit(busy, ME, T0 + 5).next!;
    expect(next).toMatchObject({ state: "interrupted", interruptedAt: T0 + 5, stateBeforeInterrupt: "between_turn", hostedBy: null });
    expect(sessionStatus(next)).toBe("interrupted");
    // Busy by OpenCode's status though the record still reads idle (the first step not written yet): cut off too.
    expect(releaseOnExit(makeRecord({ hostedBy: ME, idleAt: T0 }), ME, T0 + 5, { busy: true }).next?.state).toBe("interrupted");
  });

  it("a stop in progress is final (stopped, the parent told once); a session another process took is left alone", () => {
    const stopping = makeRecord({
      sessionId: CHILD_ID,
      parentId: ROOT_ID,
      rootId: ROOT_ID,
      depth: 1,
      level: 2,
      control: "stopping",
      hostedBy: ME,
      stop: stop("s1"),
    });
    const { next, effects } = releaseOnExit(stopping, ME, T0 + 5);
    expect(next?.control).toBe("stopped");
    expect(effects.filter((e) => e.type === "notify_parent")).toHaveLength(1);
    const taken = makeRecord({ hostedBy: OTHER });
    expect(releaseOnExit(taken, ME, T0).next).toBe(taken);
  });

  it("the parent's link to a child the exit cut off is closed aborted, once", () => {
    const parent = makeRecord({ children: [{ sessionId: CHILD_ID, agent: "x", createdAt: T0, closedAt: null, outcome: "running" }] });
    const closed = closeLinkOnExit(parent, CHILD_ID, T0 + 5).next!;
    expect(closed.children[0]).toMatchObject({ outcome: "aborted", closedAt: T0 + 5 });
    expect(closeLinkOnExit(closed, CHILD_ID, T0 + 6).next).toBe(closed);
  });
});

describe("a dead host's sweep orphans only what was left running", () => {
  it("idle and interrupted records lost nothing; a running turn or a stop in progress did", () => {
    expect(leftRunning(makeRecord({ idleAt: T0 }))).toBe(false);
    expect(leftRunning(makeRecord({ state: "interrupted", interruptedAt: T0 }))).toBe(false);
    expect(leftRunning(makeRecord({ lastActivityAt: T0 + 1, idleAt: T0 }))).toBe(true);
    expect(leftRunning(makeRecord({ control: "stopping", idleAt: T0, stop: stop("s") }))).toBe(true);
    const idle = makeRecord({ hostedBy: ME, idleAt: T0 });
    expect(recoverCrashed(idle, T0 + 9).next).toBe(idle);
  });

  it("records the old sweep ended orphaned while idle or interrupted read as they were (a read rule on load)", () => {
    const old = (over: Parameters<typeof makeRecord>[0]) =>
      makeRecord({ control: "orphaned", end: { at: T0 + 9, how: "orphaned", detail: "host process 4242 ended" }, hostedBy: ME, ...over });
    const idle = readWronglyOrphaned(old({ idleAt: T0 }));
    expect({ control: idle.control, end: idle.end, hostedBy: idle.hostedBy, status: sessionStatus(idle) }).toEqual({
      control: "active",
      end: null,
      hostedBy: null,
      status: "idle",
    });
    expect(sessionStatus(readWronglyOrphaned(old({ state: "interrupted", interruptedAt: T0 })))).toBe("interrupted");
    // Really cut off by a crash: stays orphaned.
    const running = old({ lastActivityAt: T0 + 1, idleAt: T0 });
    expect(readWronglyOrphaned(running)).toBe(running);
    const stopping = old({ idleAt: T0, stop: stop("s") });
    expect(readWronglyOrphaned(stopping)).toBe(stopping);
    // Applied by every load (storage reads through migrateRecord).
    const loaded = migrateRecord(JSON.parse(JSON.stringify(old({ idleAt: T0 }))));
    expect(loaded.ok && loaded.record.control).toBe("active");
  });
});

describe("causes are true (issue 26 item 4)", () => {
  it("the abort after L3 or a refused call is governance's stop; a budget's stop says budget; a loop's says loop; Escape is the user's", () => {
    expect(abortedBy(makeRecord({ control: "stopped", stop: stop("req-1") }))).toBe("stop");
    expect(abortedBy(makeRecord({ control: "stopping", stop: stop("req-1", 1) }))).toBe("stop");
    expect(abortedBy(makeRecord({ control: "stopped", stop: stop("budget-session-tokens-1") }))).toBe("budget");
    expect(abortedBy(makeRecord({ control: "stopping", stop: stop("budget-tree-cost-1", 1) }))).toBe("budget");
    expect(abortedBy(makeRecord({ control: "stopped", stop: stop("loop-repeat-1") }))).toBe("loop");
    expect(abortedBy(makeRecord({ control: "stopping", stop: stop("req-1", 0) }))).toBe("user");
    expect(abortedBy(makeRecord())).toBe("user");
  });
});
