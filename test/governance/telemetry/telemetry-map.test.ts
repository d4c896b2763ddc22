import { describe, expect, test } from "vitest";
import { AuditEventType } from "../../../governance/storage/audit-log.ts";
import { auditAttributes, OPTIONAL_AUDIT_TYPES, TELEMETRY_MAP } from "../../../governance/telemetry/telemetry-map.ts";

describe("TELEMETRY_MAP: audit events → span events and counters, in one table", () => {
  test("every key is an audit type this build writes (a rename upstream fails here, not silently in a dashboard)", () => {
    const known = new Set<string>(AuditEventType.options);
    const stale = Object.keys(TELEMETRY_MAP).filter((k) => !known.has(k) && !OPTIONAL_AUDIT_TYPES.includes(k));
    expect(stale).toEqual([]);
  });

  test("the decisions the issue names all have a span event", () => {
    for (const type of [
      "session_stop_requested",
      "stop_level_delivered",
      "stop_escalated",
      "session_injected",
      "emergency_halt",
      "delegation_blocked",
      "session_aborted",
      "session_resumed",
      "budget_warning",
      "budget_exceeded",
    ]) {
      expect(TELEMETRY_MAP[type]?.event, type).toMatch(/^governance\./);
    }
  });

  test("counter attributes are low-cardinality: no ids, no free text", () => {
    const attrs = TELEMETRY_MAP.emergency_halt!.count!.attrs({ kind: "max_depth", enforced: true, sessionId: "ses_1", callerAgent: "x" });
    expect(attrs).toEqual({ reason: "max_depth", enforced: true });
    expect(TELEMETRY_MAP.session_stop_requested!.count!.attrs({ level: 2, reason: "free text" })).toEqual({ level: "2", outcome: "requested", origin: "user" });
    // Governance's own stops are counted as governance's (issue 28 §2), never as the user's.
    expect(TELEMETRY_MAP.session_stop_requested!.count!.attrs({ level: 1, origin: "governance", reason: "Budget exceeded" })).toMatchObject({
      origin: "governance",
    });
  });
});

describe("governance.escapes counts the user's Escapes only", () => {
  const escapes = TELEMETRY_MAP.session_aborted!.count!;
  test.each([
    ["user", true],
    ["stop", false],
    ["cascade", false],
  ])("cause %s counted: %s", (cause, counted) => {
    expect(escapes.when?.({ from: "tool_running", cause }) ?? true).toBe(counted);
  });
});

describe("auditAttributes: nothing leaves the machine that `sessions` would not show", () => {
  test("whitelisted keys only: no paths, messages, pids or unknown keys", () => {
    const attrs = auditAttributes("plugin_started", { directory: "/home/alice/secret-project", pid: 4242, startupMs: 3, message: "ENOENT /home/alice" });
    expect(attrs).toEqual({ "governance.event": "plugin_started" });
  });

  test("free text (reason, guidance preview, sanitizer notes) and the user name in `by` stay home unless the user opted in", () => {
    const data = { sessionId: "ses_abc", by: "cli:alice", reason: "at /home/alice/repo", preview: "push to main", because: "ENOENT /home/alice" };
    const attrs = auditAttributes("session_stop_requested", data);
    expect(attrs).toEqual({ "governance.event": "session_stop_requested", "gen_ai.conversation.id": "ses_abc", "governance.by": "cli" });
    expect(auditAttributes("session_stop_requested", data, { includeText: true })).toMatchObject({
      "governance.by": "cli:alice",
      "governance.preview": "push to main",
    });
  });

  test("the session id becomes gen_ai.conversation.id; opted-in free text is cleaned, secrets redacted, clipped to 80", () => {
    const attrs = auditAttributes(
      "session_stop_requested",
      {
        sessionId: "ses_abc",
        level: 3,
        by: "cli",
        reason: `stop now \u001b[31m token=sk-proj-abcdefghijklmnopqrstuvwxyz ${"x".repeat(200)}`,
      },
      { includeText: true },
    );
    expect(attrs["gen_ai.conversation.id"]).toBe("ses_abc");
    expect(attrs["governance.level"]).toBe(3);
    const reason = String(attrs["governance.reason"]);
    expect(reason).toContain("[redacted]");
    expect(reason).not.toContain("sk-proj");
    expect(reason).not.toContain("\u001b");
    expect(Array.from(reason).length).toBeLessThanOrEqual(80);
  });
});
