import { describe, expect, it } from "vitest";
import { ABORT_CAUSES, AUDIT_DETAILS, type AuditLine, auditDetail, MAX_DETAIL } from "../../cli/audit-detail.ts";
import { DEFAULT_CONFIG } from "../../governance/config/config.ts";
import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import { closeChild } from "../../governance/session/child-links.ts";
import type { Effect } from "../../governance/session/effects.ts";
import { AuditEventType } from "../../governance/storage/audit-log.ts";
import { planDelivery } from "../../governance/stop/delivery-plan.ts";
import { confirmStopped, onDeadline, onToolResult, startStop } from "../../governance/stop/stop-ladder.ts";
import { SECOND, T0, makeChildRecord, makeLink, makeRecord } from "../governance/fixtures/records.ts";

/** The audit lines a step would write, as the log stores them (type, time, session, then the step's data). */
const lines = (effects: readonly Effect[], sessionId = "ses_x"): AuditLine[] =>
  effects.flatMap((e) => (e.type === "audit" ? [{ at: T0, type: e.event, sessionId, ...e.data }] : []));
const detailOf = (effects: readonly Effect[], type: string) => {
  const line = lines(effects).find((l) => l.type === type);
  if (!line) throw new Error(`no ${type} line among ${lines(effects).map((l) => l.type)}`);
  return auditDetail(line);
};
const stopReq = (level: 1 | 2 | 3, by = "dashboard:alice") => ({ requestId: "stop_1", at: T0, level, reason: "too slow", by, deadlineMs: 5 * SECOND });

describe("audit details: each event type's key facts in words (the dashboard's audit table and timeline)", () => {
  it("every audit type the plugin writes has a detail, or is listed as having none on purpose", () => {
    const listed = new Set(Object.keys(AUDIT_DETAILS));
    expect(AuditEventType.options.filter((t) => !listed.has(t))).toEqual([]);
    // And nothing listed that the plugin does not write (a renamed type keeps one entry, under its current name).
    expect([...listed].filter((t) => !(AuditEventType.options as readonly string[]).includes(t))).toEqual([]);
  });

  it("a stop: its level, who asked and why; a level delivered; how it ended", () => {
    const started = startStop(makeChildRecord(), stopReq(2));
    expect(detailOf(started.effects, "session_stop_requested")).toBe("L2 taken · by the dashboard (alice) · “too slow”");
    const delivered = onToolResult(started.next, T0 + SECOND);
    expect(detailOf(delivered.effects, "stop_level_delivered")).toBe("L2 delivered on a tool result");
    const final = onToolResult(delivered.next, T0 + 2 * SECOND);
    expect(detailOf(final.effects, "session_stopped")).toBe("after L3 · asked by the user · L2→L3 · “too slow”");
    // No tool call before the deadline: governance's own abort, then the session went idle.
    const due = onDeadline(startStop(makeChildRecord(), stopReq(1, "governance")).next, T0 + 5 * SECOND, { retryDeadlineMs: SECOND });
    expect(detailOf(due.effects, "session_hard_stopped")).toBe("no tool result before the deadline: aborted (attempt 1)");
    const hard = confirmStopped(due.next, T0 + 6 * SECOND, "hard-stop");
    expect(detailOf(hard.effects, "session_stopped")).toBe("hard abort (no tool result before the deadline) · asked by governance · “too slow”");
    expect(auditDetail({ at: T0, type: "stop_queued", level: 1, reason: "enough", by: "cli:bob" })).toBe("L1 · by the CLI (bob) · “enough”");
  });

  it("guidance a stop overrode says so: stop wins over inject", () => {
    const stopping = startStop(makeChildRecord(), stopReq(1)).next;
    const plan = planDelivery(stopping, {
      injects: [{ kind: "inject", id: "inj_1", at: T0, text: "use the cache", by: "cli:bob" }],
      notes: [],
      output: "OUT",
      at: T0 + SECOND,
      maxLength: 500,
      seal: "seal:0123456789abcdef",
    });
    expect(detailOf(plan.effects, "inject_dropped")).toBe("1 guidance dropped · stop wins over inject");
  });

  it("a refused delegation names caller, target and the refusal in words", () => {
    const caller = makeRecord({
      sessionId: "ses_caller00000000000000000001",
      agent: "governance-builder",
      depth: 2,
      parentId: "ses_root0000000000000000000001",
    });
    const leaf = decideSpawn(caller, { targetAgent: "governance-validator", config: DEFAULT_CONFIG });
    expect(detailOf(leaf.effects, "delegation_blocked")).toBe("governance-builder → governance-validator · a leaf agent may not delegate");
    const logOnly = decideSpawn(caller, { targetAgent: "governance-validator", config: { ...DEFAULT_CONFIG, enforcement: "log-only" } });
    expect(detailOf(logOnly.effects, "delegation_blocked")).toContain("log-only: allowed anyway");
    const deep = decideSpawn({ ...caller, agent: "governance-executor", depth: 3 }, { targetAgent: "governance-builder", config: DEFAULT_CONFIG });
    expect(detailOf(deep.effects, "emergency_halt")).toBe("governance-executor → governance-builder · beyond the maximum depth · child depth 4");
  });

  it("a child's outcome, a budget's figures in their units, an abort's real cause", () => {
    const parent = makeRecord({ children: [makeLink()] });
    expect(detailOf(closeChild(parent, makeChildRecord().sessionId, "failed", T0).effects, "child_closed")).toBe("ses_child000000000000000000001 · failed");
    expect(auditDetail({ at: T0, type: "budget_exceeded", scope: "session", key: "activeTime", used: 7_300_000, limit: 7_200_000 })).toBe(
      "session · activeTime 2h/2h",
    );
    expect(auditDetail({ at: T0, type: "budget_warning", scope: "tree", key: "toolCalls", used: 812, limit: 1000 })).toBe("tree · toolCalls 812/1000");
    // A stop's hard abort is not the user pressing Escape.
    expect(auditDetail({ at: T0, type: "session_aborted", cause: "stop", from: "between_turn" })).toBe(`${ABORT_CAUSES.stop} · in between_turn`);
    expect(auditDetail({ at: T0, type: "session_aborted", cause: "user" })).toMatch(/^Escape/);
    expect(auditDetail({ at: T0, type: "session_aborted", cause: "cascade" })).toBe("its parent was interrupted");
  });

  it("an old line is read under its current name; an unknown type shows its fields; a hostile line never throws", () => {
    expect(auditDetail({ at: T0, type: "session_interrupted", level: 3, reason: "x", by: "cli:bob" })).toBe("L3 · by the CLI (bob) · “x”");
    expect(auditDetail({ at: T0, type: "from_a_newer_build", widgets: 3 })).toBe("widgets=3");
    for (const type of AuditEventType.options) {
      const hostile: AuditLine = { at: T0, type, level: { evil: true }, by: 42, add: "x", fields: "y", delivered: null, reason: "r".repeat(5000) };
      const text = auditDetail(hostile);
      expect(typeof text).toBe("string");
      expect(text.length).toBeLessThanOrEqual(MAX_DETAIL);
    }
  });
});
