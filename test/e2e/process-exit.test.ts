import { describe, expect, test } from "vitest";
import { allSessionRecords, auditEvents, e2eHost, lastOf, locksLeft, type ModelRequest, runOpencode, serveOpencode, sessionRecord } from "../harness/index.ts";

/**
 * Issue 21 item 4: every normal exit of the real host leaves the final governance state on disk and no lock behind.
 * OpenCode 1.18.33 ends `opencode run` with the plugin's `dispose` (awaited) while the last `session.idle` is still
 * being handled; `opencode serve` has no signal handler, so SIGTERM/SIGINT killed it mid-write
 * (plugin/runtime/exit-guard.ts, in-flight.ts). Before: 8 of 8 runs left `<root>.json.lock`, the record at
 * `beginning` with its counters behind, and the next `run -s` waited ~6.5 s on the stale lock.
 */
function respond(req: ModelRequest) {
  const user = lastOf(req, "user") ?? "";
  if (user.includes("TOOL") && req.messages.at(-1)?.role === "user")
    return { toolCalls: [{ name: "bash", args: { command: "echo step", description: "one step" } }] };
  return { text: "done" };
}

describe("process exit writes the final state and releases every lock (real opencode)", () => {
  const { project } = e2eHost({ respond, serve: false });

  test("3 × `opencode run`, then `run -s`: no lock left, each record final, the resume does not wait on a lock", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await runOpencode(project, ["TOOL please"], { timeoutMs: 90_000 });
      expect(r.code).toBe(0);
      const id = allSessionRecords(project.governanceDir)
        .map((x) => x.sessionId as string)
        .find((x) => !ids.includes(x));
      expect(id).toBeDefined();
      ids.push(id!);
      expect(locksLeft(project.governanceDir)).toEqual([]);
      const record = sessionRecord(project.governanceDir, id!)!;
      expect({ state: record.state, control: record.control, toolCalls: record.counters.toolCalls }).toEqual({
        state: "between_turn",
        control: "active",
        toolCalls: 1,
      });
      expect(record.counters.modelSteps).toBeGreaterThanOrEqual(2);
    }
    const resumed = await runOpencode(project, ["-s", ids[2]!, "TOOL again"], { timeoutMs: 90_000 });
    expect(resumed.code).toBe(0);
    expect(locksLeft(project.governanceDir)).toEqual([]);
    expect(sessionRecord(project.governanceDir, ids[2]!)!.counters.toolCalls).toBe(2);
    // Lock waits are invisible in the exit code; the audit says whether the store waited: nothing was taken over.
    expect(auditEvents(project.governanceDir).filter((e) => e.type === "store_problem")).toEqual([]);
    console.info(`run -s took ${resumed.ms} ms`);
  }, 400_000);

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to \`opencode serve\` right after a turn: the turn's final state is written, no lock, the process still ends by the signal`, async () => {
      const serve = await serveOpencode(project);
      const id = (await serve.http.createSession()).id;
      await serve.http.prompt(id, "TOOL please");
      const ended = await serve.stop(signal);
      expect(ended.ms).toBeLessThan(2_900);
      expect(locksLeft(project.governanceDir)).toEqual([]);
      const record = sessionRecord(project.governanceDir, id)!;
      expect({ state: record.state, toolCalls: record.counters.toolCalls }).toEqual({ state: "between_turn", toolCalls: 1 });
    }, 90_000);
  }
});
