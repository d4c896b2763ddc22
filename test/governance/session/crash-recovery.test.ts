import { describe, expect, it } from "vitest";
import { linkChild, markOrphaned } from "../../../governance/session/child-links.ts";
import { hostSession, orphanRunningLink, recoverCrashed } from "../../../governance/session/crash-recovery.ts";
import { CHILD_ID, makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

const DEAD = { host: "box", pid: 4242, start: "100" };
const NEW = { host: "box", pid: 5151, start: "200" };

describe("crash recovery and child links as pure steps", () => {
  it("a crashed host's session ends orphaned, a stop in progress included; stopped or ended ones stay", () => {
    const stopping = makeRecord({ sessionId: CHILD_ID, control: "stopping", hostedBy: DEAD });
    const { next, effects } = recoverCrashed(stopping, T0 + 5);
    expect(next).toMatchObject({ control: "orphaned", end: { how: "orphaned", at: T0 + 5, detail: "host process 4242 ended" } });
    expect(effects).toEqual([expect.objectContaining({ type: "audit", event: "session_ended" })]);
    for (const control of ["stopped", "completed"] as const) {
      const done = makeRecord({ sessionId: CHILD_ID, control, hostedBy: DEAD });
      expect(recoverCrashed(done, T0).next).toBe(done);
    }
  });

  it("the next process takes a session: an orphaned one is active again, a stopped one stays stopped, the same host writes nothing", () => {
    const orphaned = recoverCrashed(makeRecord({ sessionId: ROOT_ID, hostedBy: DEAD }), T0).next!;
    expect(hostSession(orphaned, NEW, T0 + 1).next).toMatchObject({ control: "active", end: null, hostedBy: NEW });
    const stopped = makeRecord({ sessionId: ROOT_ID, control: "stopped", hostedBy: DEAD });
    expect(hostSession(stopped, NEW, T0 + 1).next).toMatchObject({ control: "stopped", hostedBy: NEW });
    const mine = makeRecord({ sessionId: ROOT_ID, hostedBy: NEW });
    expect(hostSession(mine, NEW, T0 + 1).next).toBe(mine);
  });

  it("a parent's link: linked once, closed orphaned only while it was running", () => {
    const child = { sessionId: CHILD_ID, agent: "governance-executor", createdAt: T0, depth: 1 };
    const linked = linkChild(makeRecord(), child).next!;
    expect(linkChild(linked, child).next).toBe(linked);
    const closed = orphanRunningLink(linked, CHILD_ID, T0 + 9).next!;
    expect(closed.children[0]).toMatchObject({ outcome: "orphaned", closedAt: T0 + 9 });
    expect(orphanRunningLink(closed, CHILD_ID, T0 + 20).next).toBe(closed);
  });

  it("the child side of an orphan: only an active child becomes orphaned; why is audited", () => {
    const why = { parentId: ROOT_ID, staleForMs: 11 * 60_000, basis: "no tool call" };
    expect(markOrphaned(makeRecord({ sessionId: CHILD_ID }), why).next?.control).toBe("orphaned");
    expect(markOrphaned(makeRecord({ sessionId: CHILD_ID, control: "stopped" }), why).next?.control).toBe("stopped");
  });
});
