import { describe, expect, it } from "vitest";
import type { AuditLine } from "../../cli/audit-detail.ts";
import { rowFacts, treeBranches } from "../../cli/dashboard-rows.ts";
import { DEFAULT_CONFIG } from "../../governance/config/config.ts";
import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import type { Effect } from "../../governance/session/effects.ts";
import { sessionStatus } from "../../governance/session/running.ts";
import { transition } from "../../governance/session/session-machine.ts";
import { sessionTree } from "../../governance/session/session-tree.ts";
import { planDelivery } from "../../governance/stop/delivery-plan.ts";
import { onDeadline, onToolResult, confirmStopped, startStop } from "../../governance/stop/stop-ladder.ts";
import { CHILD_ID, GRANDCHILD_ID, MINUTE, ROOT_ID, SECOND, T0, makeChildRecord, makeRecord } from "../governance/fixtures/records.ts";

const lines = (sessionId: string, at: number, effects: readonly Effect[]): AuditLine[] =>
  effects.flatMap((e) => (e.type === "audit" ? [{ at, type: e.event, sessionId, ...e.data }] : []));
const MACHINE = { minIdleMs: MINUTE, maxIdleMs: 48 * 60 * MINUTE };
const stopReq = (requestId: string, by: string, at = T0 + 10 * MINUTE) => ({ requestId, at, level: 1 as const, reason: "enough", by, deadlineMs: 5 * SECOND });

describe("the session tree drawn as a tree", () => {
  it("connectors from the walk's order: ├─ before a child with a later sibling, └─ before the last, │ under an open ancestor", () => {
    const records = [
      makeRecord(),
      makeChildRecord({ createdAt: T0 + 1 }),
      makeChildRecord({ sessionId: GRANDCHILD_ID, parentId: CHILD_ID, depth: 2, level: 3, createdAt: T0 + 2 }),
      makeChildRecord({ sessionId: "ses_second00000000000000000001", createdAt: T0 + 3 }),
      makeRecord({ sessionId: "ses_otherroot0000000000000001", createdAt: T0 + 4 }),
    ];
    const rows = sessionTree(records);
    const drawn = treeBranches(rows.map((r) => r.indent)).map((b, i) => b + rows[i]!.record.sessionId.slice(4, 9));
    expect(drawn).toEqual(["root0", "├─ child", "│  └─ grand", "└─ secon", "other"]);
    expect(treeBranches([0, 1, 2, 2, 1, 2])).toEqual(["", "├─ ", "│  ├─ ", "│  └─ ", "└─ ", "   └─ "]);
    expect(treeBranches([])).toEqual([]);
  });
});

describe("a row's facts: since when, the real cause, what was refused or dropped", () => {
  it("stopping for N counts from the stop's request, not from the session's start; the user's stop says who and why", () => {
    const stopping = startStop(makeChildRecord(), stopReq("stop_a", "dashboard:alice")).next;
    const told = onToolResult(stopping, T0 + 11 * MINUTE).next;
    expect(sessionStatus(told)).toBe("stopping");
    const facts = rowFacts(told, []);
    expect(facts.since).toBe(T0 + 10 * MINUTE);
    expect(facts.cause).toBe("user");
    expect(facts.notes).toEqual([
      { kind: "stop", text: "stop asked by the user, from the dashboard (alice) · “enough” · L1 delivered, L2 on its next tool result" },
    ]);
  });

  it("a stop's cause: a budget's, the loop guard's, an agent's tool; a hard abort is the stop's, not an Escape", () => {
    expect(rowFacts(startStop(makeChildRecord(), stopReq("budget-session-toolCalls-1", "governance")).next, []).cause).toBe("budget");
    expect(rowFacts(startStop(makeChildRecord(), stopReq("loop-read-1", "governance")).next, []).cause).toBe("loop guard");
    const byAgent = rowFacts(startStop(makeChildRecord(), stopReq("stop_b", "agent:governance-coordinator")).next, []);
    expect(byAgent.cause).toBe("agent");
    expect(byAgent.notes[0]!.text).toContain("stop asked by an agent, from agent governance-coordinator");
    // No tool call in time: governance aborts it, OpenCode reports the abort, the session is stopped.
    const stopping = startStop(makeChildRecord(), stopReq("loop-read-2", "governance")).next;
    const due = onDeadline(stopping, T0 + 11 * MINUTE, { retryDeadlineMs: SECOND });
    const aborted = transition(due.next, { type: "aborted", at: T0 + 11 * MINUTE + 100 }, { config: MACHINE, sessionId: CHILD_ID });
    const stopped = confirmStopped(aborted.next!, T0 + 11 * MINUTE + 200, "hard-stop");
    const events = [...lines(CHILD_ID, T0, due.effects), ...lines(CHILD_ID, T0, aborted.effects), ...lines(CHILD_ID, T0, stopped.effects)];
    expect(events.find((e) => e.type === "session_aborted")?.cause).toBe("loop");
    const facts = rowFacts(stopped.next, events);
    expect(sessionStatus(stopped.next)).toBe("stopped");
    expect(facts.cause).toBe("loop guard");
    expect(facts.since).toBe(T0 + 11 * MINUTE + 200);
    expect(facts.notes[0]!.text).toMatch(/^stop asked by the loop guard · “enough” · ended: hard abort \(no tool result before the deadline\)$/);
    expect(facts.notes[0]!.text).not.toContain("Escape");
  });

  it("an interruption says whether it was the user's Escape or its parent's", () => {
    const escaped = transition(makeChildRecord(), { type: "aborted", at: T0 + MINUTE }, { config: MACHINE, sessionId: CHILD_ID });
    const facts = rowFacts(escaped.next!, lines(CHILD_ID, T0 + MINUTE, escaped.effects));
    expect([sessionStatus(escaped.next!), facts.cause, facts.since]).toEqual(["interrupted", "Escape", T0 + MINUTE]);
    expect(facts.notes).toEqual([{ kind: "interrupted", text: "interrupted: Escape (or another client's abort)" }]);
    const cascaded = transition(makeChildRecord(), { type: "aborted", at: T0 + MINUTE, cascade: true }, { config: MACHINE, sessionId: CHILD_ID });
    const parent = rowFacts(cascaded.next!, lines(CHILD_ID, T0 + MINUTE, cascaded.effects));
    expect([parent.cause, parent.notes[0]!.text]).toEqual(["parent", "interrupted: its parent was interrupted"]);
  });

  it("a blocked delegation and guidance a stop overrode are on the row of the session they happened in (and only there)", () => {
    const caller = makeRecord({ agent: "governance-coordinator" });
    const blocked = decideSpawn(caller, { targetAgent: "governance-builder", config: DEFAULT_CONFIG });
    const stopping = startStop(makeChildRecord(), stopReq("stop_c", "cli:bob")).next;
    const plan = planDelivery(stopping, {
      injects: [{ kind: "inject", id: "inj_1", at: T0, text: "use the cache", by: "cli:bob" }],
      notes: [],
      output: "OUT",
      at: T0 + 11 * MINUTE,
      maxLength: 500,
      seal: "seal:0123456789abcdef",
    });
    const log = [...lines(ROOT_ID, T0 + MINUTE, blocked.effects), ...lines(ROOT_ID, T0 + 2 * MINUTE, blocked.effects), ...lines(CHILD_ID, T0, plan.effects)];
    expect(rowFacts(blocked.next!, log).notes).toEqual([
      { kind: "blocked", text: "delegation blocked: governance-coordinator → governance-builder · target not in its allow-list (2 refusals)" },
    ]);
    const child = rowFacts(plan.next!, log);
    expect(child.notes.map((n) => n.kind)).toEqual(["stop", "dropped"]);
    expect(child.notes[1]!.text).toBe("1 guidance dropped: stop wins over inject");
    expect(rowFacts(makeRecord({ sessionId: "ses_quiet000000000000000000001" }), log).notes).toEqual([]);
  });

  it("running counts from the current turn: after the last idle, else the start", () => {
    expect(rowFacts(makeRecord({ createdAt: T0, lastActivityAt: T0 + 5 * MINUTE }), []).since).toBe(T0);
    const again = makeRecord({ createdAt: T0, idleAt: T0 + 3 * MINUTE, lastActivityAt: T0 + 5 * MINUTE });
    expect(sessionStatus(again)).toBe("running");
    expect(rowFacts(again, []).since).toBe(T0 + 3 * MINUTE);
  });
});
