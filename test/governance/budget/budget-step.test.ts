import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { grantRaise } from "../../../governance/budget/budget-raise.ts";
import { addTreeUse } from "../../../governance/budget/budget-usage.ts";
import { budgetStep, limitsOf, raiseKept, standDownText, takeStandDown, treeStandDowns, treeStopOrder } from "../../../governance/budget/budget-step.ts";
import { DEFAULT_CONFIG, type GovernanceConfig } from "../../../governance/config/config.ts";
import type { SessionRecord } from "../../../governance/session/session-record.ts";
import { startStop } from "../../../governance/stop/stop-ladder.ts";
import { buildStandDownNotice } from "../../../governance/budget/budget-notices.ts";
import { CHILD_ID, GRANDCHILD_ID, makeRecord, ROOT_ID, T0 } from "../fixtures/records.ts";

/**
 * Budgets decided in the core (issue 29 item 2): which limits apply, what a session is told, whom a budget stops and
 * in which order, whom a tree raise stands down — the decisions plugin/budget/budget-guard.ts used to make itself.
 */

const config = (budgets: Partial<GovernanceConfig["budgets"]>): GovernanceConfig => ({ ...DEFAULT_CONFIG, budgets: { ...DEFAULT_CONFIG.budgets, ...budgets } });
const OTHER_ROOT = "ses_other0000000000000000000001";
const root = (over: Partial<SessionRecord> = {}) => makeRecord({ sessionId: ROOT_ID, agent: "coordinator", ...over } as never);
const child = (id: string, over: Record<string, unknown> = {}) =>
  makeRecord({ sessionId: id, parentId: ROOT_ID, rootId: ROOT_ID, depth: 1, level: 2, agent: "explore", ...over } as never);
const withCalls = (r: SessionRecord, toolCalls: number): SessionRecord => ({ ...r, counters: { ...r.counters, toolCalls } });
const withTreeCalls = (r: SessionRecord, toolCalls: number): SessionRecord => addTreeUse(r, { toolCalls });
const stopping = (r: SessionRecord, requestId: string): SessionRecord =>
  startStop(r, { requestId, at: T0, level: 1, reason: "over", by: "governance", deadlineMs: 5_000 }).next;

beforeAll(() => {
  const home = mkdtempSync(join(tmpdir(), "budget-step-"));
  vi.stubEnv("HOME", home);
  vi.stubEnv("XDG_STATE_HOME", join(home, "state"));
});
afterAll(() => vi.unstubAllEnvs());

describe("limitsOf: which limits apply", () => {
  it("a subagent gets its agent's limits (else the default), a tree the tree's; only raises whose signature checks out add", () => {
    const c = config({ agents: { explore: { toolCalls: 10 } }, default: { toolCalls: 3 }, tree: { toolCalls: 50 } });
    expect(limitsOf(c, "session", child(CHILD_ID)).toolCalls).toBe(10);
    expect(limitsOf(c, "session", child(CHILD_ID, { agent: "someone" })).toolCalls).toBe(3);
    expect(limitsOf(c, "tree", root()).toolCalls).toBe(50);
    const grant = grantRaise(CHILD_ID, { id: "raise-a", at: T0, scope: "session", add: { toolCalls: 5 }, by: "user" });
    expect(grant).toBeDefined();
    const raised = child(CHILD_ID, { budget: { ...child(CHILD_ID).budget, raises: [grant] } });
    expect(limitsOf(c, "session", raised).toolCalls).toBe(15);
    const forged = child(CHILD_ID, { budget: { ...child(CHILD_ID).budget, raises: [{ ...grant, add: { toolCalls: 500 } }] } });
    expect(limitsOf(c, "session", forged).toolCalls).toBe(10);
  });
});

describe("budgetStep check", () => {
  const c = config({ agents: { explore: { toolCalls: 10 } }, tree: { toolCalls: 20 } });

  it("a scope without limits, or a look caused by a stopped session, changes nothing (same record: nothing written)", () => {
    const r = withCalls(child(CHILD_ID, { agent: "unlimited" }), 99);
    const none = budgetStep(r, { type: "check", scope: "session", by: r, at: T0 }, config({ default: {} }));
    expect(none).toEqual({ next: r, effects: [], notices: [], stop: null, stoodDown: false });
    expect(none.next).toBe(r);
    const over = withCalls(child(CHILD_ID), 10);
    const by = { ...over, control: "stopped" as const };
    expect(budgetStep(over, { type: "check", scope: "session", by, at: T0 }, c).next).toBe(over);
  });

  it("a warning is a notice for the acting session; the limit is a stop by governance naming the budget", () => {
    const at8 = withCalls(child(CHILD_ID), 8);
    const warned = budgetStep(at8, { type: "check", scope: "session", by: at8, at: T0 }, c);
    expect(warned.notices).toHaveLength(1);
    expect(warned.notices[0]).toContain("GOVERNANCE BUDGET NOTICE");
    expect(warned.stop).toBeNull();
    const at10 = withCalls(warned.next, 10);
    const over = budgetStep(at10, { type: "check", scope: "session", by: at10, at: T0 + 5 }, c);
    expect(over.stop).toEqual({ scope: "session", id: `budget-session-toolCalls-${T0 + 5}`, reason: expect.stringContaining("explore") });
    expect(over.effects.map((e) => (e.type === "audit" ? e.event : e.type))).toEqual(["budget_exceeded", "toast"]);
  });

  it("a tree's budget is checked on the root's record, its reason names no agent", () => {
    const r = withTreeCalls(root(), 20);
    const by = child(CHILD_ID);
    const over = budgetStep(r, { type: "check", scope: "tree", by, at: T0 }, c);
    expect(over.stop).toMatchObject({ scope: "tree", id: `budget-tree-toolCalls-${T0}` });
    expect(over.stop?.reason).not.toContain("coordinator");
    expect(over.next.budget.treeEscalation.exceeded).toMatchObject({ key: "toolCalls", limit: 20 });
  });
});

describe("treeStopOrder: whom a tree budget stops", () => {
  it("every session of the tree still at work, the root last; other trees and sessions already stopping are left", () => {
    const hosted = [
      root(),
      child(CHILD_ID),
      stopping(child(GRANDCHILD_ID, { depth: 2, level: 3, parentId: CHILD_ID }), "stop-user-1"),
      makeRecord({ sessionId: OTHER_ROOT } as never),
      child("ses_child0000000000000000000002", { control: "stopped" }),
    ];
    expect(treeStopOrder(root(), hosted)).toEqual([CHILD_ID, ROOT_ID]);
    expect(treeStopOrder(stopping(root(), "stop-user-2"), hosted)).toEqual([CHILD_ID]);
  });
});

describe("budgetStep raise and treeStandDowns", () => {
  const c = config({ agents: { explore: { toolCalls: 10 } }, tree: { toolCalls: 20 } });

  it("a raise clears the exceeded mark and stands the budget's stop down; the same raise again changes nothing", () => {
    const at10 = withCalls(child(CHILD_ID), 10);
    const over = budgetStep(at10, { type: "check", scope: "session", by: at10, at: T0 }, c);
    const stopped = stopping(over.next, over.stop?.id as string);
    const grant = grantRaise(CHILD_ID, { id: "raise-b", at: T0, scope: "session", add: { toolCalls: 10 }, by: "user" });
    const raised = budgetStep(stopped, { type: "raise", grant: grant!, at: T0 + 1 }, c);
    expect(raised.stoodDown).toBe(true);
    expect(raised.next.control).toBe("active");
    expect(raised.next.budget.session.exceeded).toBeNull();
    expect(budgetStep(raised.next, { type: "raise", grant: grant!, at: T0 + 2 }, c).next).toBe(raised.next);
  });

  it("a tree raise stands down only the tree budget's stops in that tree, and only once the root is no longer over", () => {
    const hosted = [
      stopping(child(CHILD_ID), `budget-tree-toolCalls-${T0}`),
      stopping(child("ses_child0000000000000000000002"), `budget-session-toolCalls-${T0}`),
      stopping(child("ses_child0000000000000000000003"), "stop-user-1"),
      stopping(makeRecord({ sessionId: "ses_child0000000000000000000004", parentId: OTHER_ROOT, rootId: OTHER_ROOT } as never), `budget-tree-x-${T0}`),
    ];
    expect(treeStandDowns(root(), hosted)).toEqual([CHILD_ID]);
    const stillOver = root({
      budget: { ...root().budget, treeEscalation: { ...root().budget.treeEscalation, exceeded: { key: "toolCalls", used: 20, limit: 20, at: T0 } } },
    });
    expect(treeStandDowns(stillOver, hosted)).toEqual([]);
    expect(treeStandDowns(undefined, hosted)).toEqual([]);
  });

  it("a stood-down session is told what is left of its own limits and its tree's", () => {
    const text = standDownText(c, withCalls(child(CHILD_ID), 4), withTreeCalls(root(), 7), T0);
    expect(text).toBe(
      buildStandDownNotice([
        { key: "toolCalls", used: 4, limit: 10, scope: "session" },
        { key: "toolCalls", used: 7, limit: 20, scope: "tree" },
      ]),
    );
  });

  it("the stand-down notice is taken once, and only by a session at work", () => {
    const marked = child(CHILD_ID, { budget: { ...child(CHILD_ID).budget, stoodDown: "session" } });
    const taken = takeStandDown(marked, c, root(), T0);
    expect(taken.text).toBe(standDownText(c, marked, root(), T0));
    expect(taken.effects).toEqual([{ type: "audit", event: "budget_resumed", data: { scope: "session" } }]);
    expect(taken.next.budget.stoodDown).toBeNull();
    expect(takeStandDown(taken.next, c, root(), T0)).toEqual({ next: taken.next, effects: [], text: null });
    const stillStopping = stopping(marked, "stop-user-1");
    expect(takeStandDown(stillStopping, c, root(), T0).next).toBe(stillStopping);
  });

  it("a raise already kept (verified) is a replay; a forged copy on the record is not", () => {
    const grant = grantRaise(CHILD_ID, { id: "raise-c", at: T0, scope: "session", add: { toolCalls: 1 }, by: "user" })!;
    const kept = child(CHILD_ID, { budget: { ...child(CHILD_ID).budget, raises: [grant] } });
    expect(raiseKept(kept, "raise-c")).toBe(true);
    expect(raiseKept(kept, "raise-d")).toBe(false);
    expect(raiseKept(undefined, "raise-c")).toBe(false);
    const forged = child(CHILD_ID, { budget: { ...child(CHILD_ID).budget, raises: [{ ...grant, sig: "0".repeat(64) }] } });
    expect(raiseKept(forged, "raise-c")).toBe(false);
  });
});
