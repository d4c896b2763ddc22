import { describe, expect, it } from "vitest";
import type { StopDirective } from "../../../governance/stop/directive-queue.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { ignoredStops, triageStopRequests } from "../../../governance/stop/stop-requests.ts";
import { SECOND, T0, makeChildRecord } from "../fixtures/records.ts";

const stop = (id: string, level: 1 | 2 | 3 = 1): StopDirective => ({ kind: "stop", id, at: T0, level, reason: "r", by: "cli" });
const stoppingAt = (level: 1 | 2 | 3, id = "s1") =>
  startStop(makeChildRecord(), { requestId: id, at: T0, level, reason: "r", by: "cli", deadlineMs: 5 * SECOND }).next;
const ids = (t: { begin: StopDirective[] }) => t.begin.map((d) => d.id);

describe("triageStopRequests: each stop request is acted on once", () => {
  it("an active session begins its first request; a second of no higher level in the same batch changes nothing", () => {
    expect(ids(triageStopRequests(makeChildRecord(), [stop("s1"), stop("s2"), stop("s3", 2)]))).toEqual(["s1", "s3"]);
  });
  it("the request already pending, seen again by the next poll, is not begun again; a stricter one is", () => {
    const r = stoppingAt(1);
    expect(triageStopRequests(r, [stop("s1")])).toEqual({ begin: [], drain: null });
    expect(ids(triageStopRequests(r, [stop("s1"), stop("s2", 1), stop("s3", 3)]))).toEqual(["s3"]);
  });
  it("a stopped session's requests are drained as already stopped; a finished one's as not running", () => {
    expect(triageStopRequests({ ...makeChildRecord(), control: "stopped" }, [stop("s1")]).drain).toBe("already stopped");
    expect(triageStopRequests({ ...makeChildRecord(), control: "completed" }, [stop("s1")]).drain).toBe("not running");
    expect(triageStopRequests({ ...makeChildRecord(), control: "orphaned" }, [stop("s1")]).drain).toBe("not running");
  });
  it("no record, or nothing queued: nothing to do", () => {
    expect(triageStopRequests(undefined, [stop("s1")])).toEqual({ begin: [], drain: null });
    expect(triageStopRequests({ ...makeChildRecord(), control: "stopped" }, [])).toEqual({ begin: [], drain: null });
  });
});

describe("triageStopRequests: a session whose turn has ended is not stopped", () => {
  it("an idle child (its task just returned) or an idle root: drained as not running, nothing begun", () => {
    const idle = { ...makeChildRecord(), idleAt: T0 + SECOND, lastActivityAt: T0 + SECOND };
    expect(triageStopRequests(idle, [stop("s1")])).toEqual({ begin: [], drain: "not running" });
  });
  it("a new turn after the idle (activity later than it) is running again", () => {
    const busy = { ...makeChildRecord(), idleAt: T0 + SECOND, lastActivityAt: T0 + 2 * SECOND };
    expect(ids(triageStopRequests(busy, [stop("s1")]))).toEqual(["s1"]);
  });
});

describe("ignoredStops: what a drained queue reports", () => {
  it("the request a stop acted on is done, not ignored (a hard stop ends the session before a tool result claims it)", () => {
    const stopped = { ...stoppingAt(1, "s1"), control: "stopped" as const };
    expect(ignoredStops(stopped, [stop("s1")])).toEqual([]);
    expect(ignoredStops(stopped, [stop("s1"), stop("s2", 2)]).map((d) => d.id)).toEqual(["s2"]);
  });
  it("a session never stopped (finished, or unknown): every drained request was ignored", () => {
    expect(ignoredStops({ ...makeChildRecord(), control: "completed" }, [stop("s1")]).map((d) => d.id)).toEqual(["s1"]);
    expect(ignoredStops(undefined, [stop("s1")]).map((d) => d.id)).toEqual(["s1"]);
  });
});
