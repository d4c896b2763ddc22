import { beforeAll, describe, expect, test } from "vitest";
import { type LoadResult, runLoadScenario } from "./load-scenario.ts";

/**
 * Under load (issues 11 and 21 item 9): one `opencode serve` running 20 subagents at once while three CLI processes
 * send stop and inject requests at random. Nothing here is about time: how long a step takes is the machine's (the
 * figures are printed, and `npm run bench` records them). What is checked is that nothing hangs — the wait fails only
 * when nothing moved for 90 s — and nothing goes wrong when everything happens at once: each directive reaches its own
 * session at the step it is due, exactly once, and every record, counter and lock is right after the exit.
 *
 * Runs after every other test file, alone (vitest.config.ts, project "load"): sharing 2 cores with other end-to-end
 * files would measure them, not this.
 */
describe("one opencode serve, 20 subagents at once, three CLIs stopping and injecting", () => {
  let r: LoadResult;
  beforeAll(async () => {
    r = await runLoadScenario({ subagents: 20, callsEach: 12 });
    console.log(`serve under load:\n  ${r.summary.join("\n  ")}`);
  }, 900_000);

  test("the subagents really ran side by side, and the CLIs sent stops and injects", () => {
    expect(r.peakConcurrent).toBeGreaterThanOrEqual(10);
    expect(r.directives.filter((d) => d.kind === "inject").length).toBeGreaterThan(0);
    expect(r.directives.filter((d) => d.kind === "stop").length).toBeGreaterThan(0);
    expect(
      r.directives.every((d) => d.code === 0),
      JSON.stringify(r.directives.filter((d) => d.code !== 0)),
    ).toBe(true);
  });

  test("every directive reached its own session's tool results exactly once, at the step it was due, and no other session's", () => {
    // A stop may instead end in the hard stop when the child's step outlasts the deadline (10 s here): then its model
    // never reads the stop, and the child is stopped all the same (checked below).
    const wrong = r.delivery.filter((d) => !d.hardStopped && (d.inTarget !== 1 || d.elsewhere !== 0 || (d.stepsAfterQueued ?? 99) > 2));
    expect(wrong, JSON.stringify(wrong, null, 1)).toEqual([]);
    for (const d of r.delivery.filter((x) => x.hardStopped)) expect(d.inTarget, `stop of ${d.directive.child}`).toBeLessThanOrEqual(1);
  });

  test("every stopped child stopped, the others ran all their calls; counters match what OpenCode recorded", () => {
    const stopped = new Set(r.directives.filter((d) => d.kind === "stop").map((d) => d.child));
    for (const rec of r.records) expect(rec.parsed, `record ${rec.id}`).toBe(true);
    for (const child of r.childIds) {
      const rec = r.records.find((x) => x.id === child)!;
      expect(rec.toolCalls, `counters of ${child}`).toBe(rec.toolParts);
      if (stopped.has(child)) expect(rec.control, `control of ${child}`).toBe("stopped");
      else expect(rec.toolResults, `calls of ${child}`).toBe(r.callsEach);
    }
  });

  test("the exit left no lock or temporary file behind", () => {
    expect(r.leftovers).toEqual([]);
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
