import { describe, expect, it } from "vitest";
import { detectVersion, migrateRecord } from "../../../governance/session/record-migrations.ts";
import { CURRENT_SCHEMA_VERSION } from "../../../governance/session/session-record.ts";
import { makeRecord, sid } from "../helpers.ts";

/** The pre-versioning metadata of seed 003 (sessionLevel, parentSession, ISO timestamps, no schemaVersion). */
const v0Child = {
  sessionId: sid("child001"),
  sessionState: "interrupted",
  sessionLevel: 2,
  parentSession: sid("parent01"),
  agent: "general",
  createdAt: "2026-02-04T10:00:00Z",
  lastUpdated: "2026-02-04T10:30:00Z",
  idleAt: "2026-02-04T10:30:00Z",
  violationCount: 2,
  delegationDepth: 1,
  phase: "implementation",
  childSessions: [{ sessionId: sid("grandkid"), agent: "explore", createdAt: "2026-02-04T10:10:00Z" }],
};

describe("migrateRecord", () => {
  it("passes a current record through unchanged", () => {
    const record = makeRecord(sid("current1"), 1_000);
    expect(migrateRecord(JSON.parse(JSON.stringify(record)))).toEqual({ ok: true, record, fromVersion: CURRENT_SCHEMA_VERSION });
  });

  it("migrates a v0 child record forward", () => {
    const result = migrateRecord(v0Child);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.fromVersion).toBe(0);
    expect(result.record).toMatchObject({
      schemaVersion: CURRENT_SCHEMA_VERSION,
      sessionId: v0Child.sessionId,
      parentId: v0Child.parentSession,
      rootId: v0Child.parentSession,
      level: 2,
      depth: 1,
      agent: "general",
      state: "interrupted",
      control: "active",
      createdAt: Date.parse("2026-02-04T10:00:00Z"),
      updatedAt: Date.parse("2026-02-04T10:30:00Z"),
      lastActivityAt: Date.parse("2026-02-04T10:30:00Z"),
      interruptedAt: Date.parse("2026-02-04T10:30:00Z"),
      counters: { violations: 2, toolCalls: 0 },
      children: [{ sessionId: sid("grandkid"), agent: "explore", outcome: "running", closedAt: null }],
    });
  });

  it("migrates a minimal v0 primary record with defaults", () => {
    const result = migrateRecord({ sessionId: sid("primary1"), sessionLevel: 1, sessionState: "weird", lastUpdated: "2026-02-04T10:30:00Z" });
    expect(result.ok && result.record).toMatchObject({ level: 1, depth: 0, parentId: null, rootId: sid("primary1"), state: "between_turn" });
  });

  it.each([
    ["a future schemaVersion", { ...makeRecord(sid("future01"), 1), schemaVersion: CURRENT_SCHEMA_VERSION + 1 }, /newer opencode-governance/],
    ["a fractional schemaVersion", { ...makeRecord(sid("frac0001"), 1), schemaVersion: 1.5 }, /invalid schemaVersion/],
    ["a string schemaVersion", { ...makeRecord(sid("str00001"), 1), schemaVersion: "1" }, /invalid schemaVersion/],
    ["an array", [], /not a JSON object/],
    ["null", null, /not a JSON object/],
    ["a v1 record missing fields", { schemaVersion: 1, sessionId: sid("broken01") }, /invalid v2 record/],
    ["a v0 record with an unparseable date", { ...v0Child, lastUpdated: "yesterday" }, /v0→v1.*not a date/],
    ["a v0 record with a non-OpenCode id", { ...v0Child, sessionId: "abc-123" }, /invalid v2 record/],
  ])("rejects %s with a reason", (_label, raw, reason) => {
    const result = migrateRecord(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it("migrates a v1 record to v2 (issue 33): phase unknown, first action unchecked, todo counted from now, no interruptions", () => {
    const { phase, phaseHistory, stale, firstAction, interruptions, ...rest } = makeRecord(sid("version1"), 5_000, {
      firstTool: "edit",
      counters: { toolCalls: 42, modelSteps: 7, violations: 0, compactions: 0, resumes: 0 },
    });
    const v1 = { ...rest, schemaVersion: 1, todo: { total: 4, open: 3 } };
    const result = migrateRecord(JSON.parse(JSON.stringify(v1)));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.fromVersion).toBe(1);
    expect(result.record).toMatchObject({
      schemaVersion: 2,
      firstTool: "edit",
      firstAction: null,
      phase: null,
      phaseHistory: [],
      stale: [],
      interruptions: [],
    });
    // A list untouched "for 42 calls" before anyone counted is not stale: it counts from the upgrade.
    expect(result.record.todo).toEqual({ total: 4, open: 3, atToolCalls: 42 });
    expect([phase, phaseHistory, stale, firstAction, interruptions]).toEqual([null, [], [], null, []]);
  });

  it("keeps a v0 record's phase (seed 003 metadata carries it) as the session's phase", () => {
    const result = migrateRecord(v0Child);
    expect(result.ok && result.record.phase).toEqual({ phase: "implementation", at: Date.parse(v0Child.lastUpdated) });
    expect(result.ok && result.record.phaseHistory).toEqual([{ phase: "implementation", at: Date.parse(v0Child.lastUpdated) }]);
  });

  it("never mutates its input", () => {
    const input = structuredClone(v0Child);
    migrateRecord(input);
    expect(input).toEqual(v0Child);
  });

  it("detects versions", () => {
    expect(detectVersion({})).toEqual({ ok: true, version: 0 });
    expect(detectVersion({ schemaVersion: 3 })).toEqual({ ok: true, version: 3 });
  });
});
