import { describe, expect, test } from "vitest";
import { endChildLink, endSession, errorEndsSession } from "../../../governance/session/session-end.ts";
import { onCompliance, startStop } from "../../../governance/stop/stop-ladder.ts";
import { makeRecord, sid } from "../helpers.ts";

const T = 1_700_000_000_000;
const CHILD = sid("endchild");
const PARENT = sid("endparent");
const child = (overrides = {}) => makeRecord(CHILD, T, { parentId: PARENT, rootId: PARENT, depth: 1, level: 2, ...overrides });

describe("endSession (seed 002: every exit path ends the bookkeeping)", () => {
  test("completion, failure and deletion end a running (or stopping) record: not running, and `end` says how", () => {
    for (const how of ["completed", "failed", "deleted"] as const) {
      for (const control of ["active", "stopping"] as const) {
        if (how === "completed" && control === "stopping") continue; // obeyed: below
        const { next, effects } = endSession(child({ control }), how, T + 5, "APIError");
        expect(next).toMatchObject({ control: "completed", end: { at: T + 5, how, detail: "APIError" }, updatedAt: T + 5 });
        expect(effects).toEqual([
          { type: "audit", event: "session_ended", data: { how, detail: "APIError", control: "completed", wasStopping: control === "stopping" } },
        ]);
      }
    }
    expect(endSession(child(), "orphaned", T + 5).next).toMatchObject({ control: "orphaned", end: { how: "orphaned", detail: null } });
  });

  test("a session being stopped whose task returns obeyed: stopped as compliance, the parent told once, whichever signal came first", () => {
    const stopping = startStop(child(), {
      requestId: "req_1",
      at: T,
      level: 1,
      reason: "Budget exceeded: 5 of 5 tool calls",
      by: "budget",
      deadlineMs: 5_000,
    }).next;
    const { next, effects } = endSession(stopping, "completed", T + 5);
    expect(next).toMatchObject({ control: "stopped", stoppedAt: T + 5, end: { how: "completed" } });
    expect(effects.map((e) => (e.type === "audit" ? e.event : e.type))).toEqual(["session_stopped", "notify_parent", "session_ended"]);
    expect(effects.find((e) => e.type === "notify_parent")).toMatchObject({ parentId: PARENT, how: "compliance" });
    // OpenCode's idle after the task result (or before it): the stop is already final, nothing more is said.
    expect(onCompliance(next!, T + 6).effects).toEqual([]);
    const idleFirst = onCompliance(stopping, T + 4);
    expect(endSession(idleFirst.next, "completed", T + 5).effects.filter((e) => e.type === "notify_parent")).toEqual([]);
  });

  test("a stopped session stays stopped (what the user asked for happened) and only gains its end", () => {
    expect(endSession(child({ control: "stopped" }), "deleted", T + 1).next).toMatchObject({ control: "stopped", end: { how: "deleted" } });
  });

  test("idempotent: the first end stays and reports once; a deletion is final whatever came before", () => {
    const failed = endSession(child(), "failed", T + 1).next;
    const again = endSession(failed, "completed", T + 2);
    expect(again.next).toBe(failed);
    expect(again.effects).toEqual([]);
    const deleted = endSession(failed, "deleted", T + 3);
    expect(deleted.next?.end).toMatchObject({ how: "deleted", at: T + 3 });
    expect(endSession(deleted.next, "deleted", T + 4)).toEqual({ next: deleted.next, effects: [] });
  });

  test("no record: nothing written", () => {
    expect(endSession(undefined, "deleted", T)).toEqual({ next: undefined, effects: [] });
  });

  test("the parent's link closes once with the matching outcome (deleted → aborted)", () => {
    const parent = makeRecord(PARENT, T, { children: [{ sessionId: CHILD, agent: null, createdAt: T, closedAt: null, outcome: "running" }] });
    for (const [how, outcome] of [
      ["completed", "completed"],
      ["failed", "failed"],
      ["deleted", "aborted"],
    ] as const) {
      expect(endChildLink(parent, CHILD, how, T + 9).next?.children[0]).toMatchObject({ outcome, closedAt: T + 9 });
    }
  });

  test("an error ends a running child's work, never a root's (its user may prompt again)", () => {
    expect(errorEndsSession(child())).toBe(true);
    expect(errorEndsSession(child({ control: "stopping" }))).toBe(true);
    expect(errorEndsSession(child({ control: "completed" }))).toBe(false);
    expect(errorEndsSession(makeRecord(PARENT, T))).toBe(false);
    expect(errorEndsSession(undefined)).toBe(false);
  });
});
