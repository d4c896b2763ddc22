import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runLoadScenario, type LoadResult } from "./load-scenario.ts";

/**
 * Under load (issue 11): one `opencode serve` running 20 subagents at once (50 tool calls each) while three CLI
 * processes send stop and inject requests at random. Nothing here is about time (the figures are printed, and
 * `npm run bench` records them); it is about nothing going wrong when everything happens at once.
 */
// Skipped (issue 21 item 9, open). Run alone on 2026-11-25 it passed 2 of 2: 20 × 50 calls in 213 s and 20 × 20 in
// 146 s, 12/12 directives delivered exactly once, counters 20/20. Not re-enabled: the directive latency under this load
// (median 13–15 s, max 17.7 s, against 0.6 s unloaded) is not explained yet, and an earlier fresh-clone run left 34
// sessions busy after the 240 s bound. The config above lifts the concurrency and loop limits it would otherwise hit.
describe.skip("one opencode serve, 20 subagents at once, three CLIs stopping and injecting", () => {
  let r: LoadResult;
  beforeAll(async () => {
    r = await runLoadScenario({ subagents: 20, callsEach: 50 });
    console.log(`serve under load:\n  ${r.summary.join("\n  ")}`);
  }, 400_000);
  afterAll(() => undefined);

  test("the subagents really ran side by side, and the CLIs sent stops and injects", () => {
    expect(r.peakConcurrent).toBeGreaterThanOrEqual(10);
    expect(r.directives.filter((d) => d.kind === "inject").length).toBeGreaterThan(0);
    expect(r.directives.filter((d) => d.kind === "stop").length).toBeGreaterThan(0);
    expect(
      r.directives.every((d) => d.code === 0),
      JSON.stringify(r.directives.filter((d) => d.code !== 0)),
    ).toBe(true);
  });

  test("every directive reached its own session's tool results exactly once, and no other session's", () => {
    const wrong = r.delivery.filter((d) => d.inTarget !== 1 || d.elsewhere !== 0);
    expect(wrong, JSON.stringify(wrong, null, 1)).toEqual([]);
  });

  test("every stopped child stopped, the others ran all their calls; no record lost or corrupt, counters complete", () => {
    const stopped = new Set(r.directives.filter((d) => d.kind === "stop").map((d) => d.child));
    for (const rec of r.records) expect(rec.parsed, `record ${rec.id}`).toBe(true);
    for (const child of r.childIds) {
      const rec = r.records.find((x) => x.id === child)!;
      expect(rec.toolCalls, `counters of ${child}`).toBe(rec.toolResults);
      if (stopped.has(child)) expect(rec.control, `control of ${child}`).toBe("stopped");
      else expect(rec.toolResults, `calls of ${child}`).toBe(r.callsEach);
    }
  });

  test("the audit log is complete: every line parses, every session, link, inject and stop is there once", () => {
    expect(r.audit.unparsable).toBe(0);
    const of = (type: string, id: string) => r.audit.events.filter((e) => e.type === type && e.sessionId === id).length;
    for (const id of [...r.rootIds, ...r.childIds]) expect(of("session_created", id), `session_created ${id}`).toBe(1);
    for (const d of r.directives) {
      if (d.kind === "stop") {
        expect(of("session_stop_requested", d.child)).toBe(1);
        expect(of("session_stopped", d.child)).toBe(1);
      } else {
        const delivered = r.audit.events.filter((e) => e.type === "session_injected" && e.sessionId === d.child && String(e.preview).includes(d.token));
        expect(delivered.length, `session_injected for ${d.token}`).toBe(1);
      }
    }
    expect(r.audit.types.hook_error ?? 0).toBe(0);
  });
});
