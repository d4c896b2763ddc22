import { describe, expect, it } from "vitest";
import { AuditEventType } from "../../../governance/storage/audit-log.ts";
import { currentAuditType, matchesAuditType, RENAMED_AUDIT_TYPES } from "../../../governance/storage/audit-names.ts";

const line = (type: string, data: Record<string, unknown> = {}) => ({ at: 1, type, ...data });

describe("renamed audit types: old lines are found under the old and the new name", () => {
  it("every new name is a type the code writes; no old name is still written", () => {
    for (const [old, now] of Object.entries(RENAMED_AUDIT_TYPES)) {
      expect(AuditEventType.options).not.toContain(old);
      for (const name of now) expect(AuditEventType.options).toContain(name);
    }
  });

  it.each([
    [line("session_interrupted", { level: 1 }), "stop_queued"],
    [line("expired_resume", { idleMs: 5 }), "session_expired"],
    [line("session_stop_escalated", { delivered: 2 }), "stop_level_delivered"],
    [line("session_stop_escalated", { from: 1, to: 2 }), "stop_escalated"],
    [line("stop_queued"), "stop_queued"],
    [line("something_newer"), "something_newer"],
  ])("%o reads as %s", (event, now) => {
    expect(currentAuditType(event)).toBe(now);
    expect(matchesAuditType(event, now)).toBe(true);
  });

  it("an old name matches everything it was split into, and nothing else", () => {
    expect(matchesAuditType(line("stop_level_delivered"), "session_stop_escalated")).toBe(true);
    expect(matchesAuditType(line("stop_escalated"), "session_stop_escalated")).toBe(true);
    expect(matchesAuditType(line("session_stop_requested"), "session_stop_escalated")).toBe(false);
    expect(matchesAuditType(line("stop_queued"), "session_interrupted")).toBe(true);
    expect(matchesAuditType(line("session_aborted"), "session_interrupted")).toBe(false);
    expect(matchesAuditType(line("session_stop_escalated", { delivered: 1 }), "stop_escalated")).toBe(false);
  });
});
