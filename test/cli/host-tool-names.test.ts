import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { cliOut } from "./in-process-cli.ts";

/**
 * The CLI names a tool as the host the plugin runs on offers it: a record keeps the core's `bash`, OpenCode 2 offers
 * `shell` (governance/host/host-lines.ts). `sessions --json` and the dashboard said `shell`; the `sessions` text and
 * `status` (a missed first action) still said `bash` on an OpenCode 2 project.
 */
const ID = "ses_h1shell00000000000000000W";

let p: CliProject;
beforeAll(async () => {
  p = await createCliProject();
  const now = Date.now();
  await p.put({
    sessionId: ID,
    agent: "governance-coordinator",
    lastToolCall: { tool: "bash", callId: "call_1", at: now, summary: "ls -la" },
    firstAction: { at: now, tool: "bash", role: "delegating", ok: false },
  });
  const audit = new AuditLog({ paths: new SessionStore({ projectDir: p.dir, clock: systemClock }).paths, clock: systemClock });
  await audit.append("host_detected", { line: 2, version: "2.0.15" });
});
afterAll(() => p?.cleanup());

const cli = (...args: string[]) => cliOut(p.dir, ...args);

describe("tool names as the host offers them (OpenCode 2: shell, not bash)", () => {
  it("sessions (text and --json)", async () => {
    const text = await cli("sessions", "--all");
    expect(text).toContain("last: shell ls -la");
    expect(text).not.toContain("bash");
    const json = JSON.parse(await cli("sessions", "--json")) as { sessions: { lastToolCall: { tool: string } | null; warnings: string[] }[] };
    expect(json.sessions[0]?.lastToolCall?.tool).toBe("shell");
    expect(json.sessions[0]?.warnings).toContain("first action missed: shell first (DELEGATING)");
  });

  it("status (text and --json): the missed first action", async () => {
    const text = await cli("status");
    expect(text).toContain("first action missed: shell first");
    expect(text).not.toMatch(/\bbash\b/);
    const json = JSON.parse(await cli("status", "--json")) as { checks: { warnings: string[] }[] };
    expect(json.checks[0]?.warnings[0]).toMatch(/^first action missed: shell first/);
  });
});
