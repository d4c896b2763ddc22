import { describe, expect, it } from "vitest";
import { linkChild, markOrphaned } from "../../../governance/session/child-links.ts";
import { cutOffByCrash, hostSession, orphanRunningLink, recoverCrashed } from "../../../governance/session/crash-recovery.ts";
import { resumableRoots } from "../../../governance/session/resumable-roots.ts";
import { transition } from "../../../governance/session/session-machine.ts";
import { trustFromKey } from "../../../governance/storage/record-attestation.ts";
import { CHILD_ID, HOUR, MINUTE, makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

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

  describe("a root whose turn a crash cut off is resumable like an interrupted one (issue 43)", () => {
    const window = { minIdleMs: HOUR, maxIdleMs: 48 * HOUR, trust: trustFromKey(undefined) };
    // Mid-turn (last activity after the last idle), the stateBeforeInterrupt of an Escape long ago still on it.
    const midTurn = makeRecord({ sessionId: ROOT_ID, hostedBy: DEAD, state: "between_turn", stateBeforeInterrupt: "compacted", idleAt: T0 - 5 * MINUTE });
    const crashedRoot = recoverCrashed(midTurn, T0 + MINUTE).next!;
    const crashedChild = recoverCrashed(makeRecord({ sessionId: CHILD_ID, parentId: ROOT_ID, rootId: ROOT_ID, level: 2, depth: 1, hostedBy: DEAD }), T0).next!;

    it("ended orphaned, it is listed at once (no hour to wait) and until 48 h, marked crashed; a crash-orphaned child never", () => {
      expect(cutOffByCrash(crashedRoot)).toBe(true);
      expect(cutOffByCrash(crashedChild)).toBe(false);
      const at = (now: number) => resumableRoots([crashedRoot, crashedChild], { ...window, now });
      expect(at(T0 + 2 * MINUTE)).toEqual([{ record: crashedRoot, interrupted: true, crashed: true }]);
      expect(at(T0 + 48 * HOUR - 1)).toHaveLength(1);
      expect(at(T0 + 48 * HOUR)).toEqual([]);
    });

    it("its first activity in a new process is a resume (interrupted, the state the crash cut off), and the process takes it", () => {
      const r = transition(crashedRoot, { type: "first_seen", at: T0 + 2 * MINUTE, agent: "coordinator" }, { config: window, sessionId: ROOT_ID });
      expect(r.next).toMatchObject({ state: "resumed", resume: { interrupted: true, previousState: "between_turn" } });
      expect(r.effects).toContainEqual({ type: "resume_context", allowed: true });
      expect(r.effects).toContainEqual(expect.objectContaining({ event: "session_resumed", data: expect.objectContaining({ cutOffByCrash: true }) }));
      expect(hostSession(r.next, NEW, T0 + 2 * MINUTE).next).toMatchObject({ control: "active", end: null, state: "resumed" });
    });

    it("a root the user stopped is never offered, interrupted or not (its stop is final: every tool call is refused)", () => {
      const stopped = { ...crashedRoot, control: "stopped" as const, state: "interrupted" as const, end: null };
      expect(resumableRoots([stopped], { ...window, now: T0 + 2 * HOUR })).toEqual([]);
      expect(resumableRoots([{ ...stopped, control: "active" as const }], { ...window, now: T0 + 2 * HOUR })).toHaveLength(1);
    });

    it("an ordinary idle root that a sweep left alone is not crash-cut (the one-hour rule still holds for it)", () => {
      const idle = makeRecord({ sessionId: ROOT_ID, hostedBy: DEAD, idleAt: T0 });
      expect(recoverCrashed(idle, T0 + MINUTE).next).toBe(idle);
      expect(resumableRoots([idle], { ...window, now: T0 + 2 * MINUTE })).toEqual([]);
    });
  });
});
