import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { Runtime } from "../../../plugin/wiring/runtime.ts";
import { events, type PluginFixture, pluginFixtureEach, ROOT, CHILD } from "../fixture.ts";

const OTHER = "ses_other0000000000000000000001";

let f: PluginFixture;
pluginFixtureEach((made) => (f = made));

/** Issue 39: coverage said "0/0 children linked" for a session whose child was cut off before its task returned. */
describe("coverage counts a child when the host creates it", () => {
  test("a child the host created and governance linked is 1/1 without any task result; the result later does not count it twice", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "governance-executor" }));
    expect(f.rt.coverage.line(ROOT)).toContain("1/1 children linked");
    await f.rt.coverage.reported(ROOT, CHILD);
    expect(f.rt.coverage.line(ROOT)).toContain("1/1 children linked");
    expect(await f.audit("governance_gap")).toEqual([]);
  });
});

/** Newcomer walk 3: `status` read in a session's first seconds showed no coverage line (the file came 15 s later). */
describe("coverage of a new session is written within seconds", () => {
  test("a new last session's counts land 2 s after its first step; further changes wait the 15 s timer", async () => {
    const file = path.join(f.dir, ".opencode", "governance", "coverage.json");
    const last = () => (JSON.parse(fs.readFileSync(file, "utf8")) as { last: { sessionId: string; steps: number } }).last;
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    f.rt.coverage.hostStep(ROOT);
    await f.timers.advance(1_000);
    expect(fs.existsSync(file)).toBe(false);
    await f.timers.advance(1_000);
    expect(last()).toMatchObject({ sessionId: ROOT, steps: 1 });
    f.rt.coverage.hostStep(ROOT);
    await f.timers.advance(5_000);
    expect(last().steps).toBe(1);
    await f.timers.advance(10_000);
    expect(last().steps).toBe(2);
    // Another root taking its place is written as soon.
    await onEvent(f.rt, events.created(OTHER, { agent: "build" }));
    f.rt.coverage.hostStep(OTHER);
    await f.timers.advance(2_000);
    expect(last()).toMatchObject({ sessionId: OTHER, steps: 1 });
  });
});

/** Issue 39: after Escape and quit, starting OpenCode again said nothing about the session to come back to. */
describe("a resumable session is offered once per start, when a client is there", () => {
  /** ROOT interrupted by process one (`f`), then OpenCode started again over the same project with `argv`. */
  async function startAgain(argv: string[]): Promise<Runtime> {
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    await onEvent(f.rt, events.aborted(ROOT));
    expect(f.rt.sessions.peek(ROOT)?.state).toBe("interrupted");
    await f.rt.dispose();
    f.calls.toasts.length = 0;
    const next = new Runtime({ directory: f.dir }, { clock: f.clock, timers: f.timers, api: f.api, argv });
    await next.start();
    return next;
  }
  const offers = () => f.calls.toasts.filter((t) => t.message.includes("can be resumed"));
  const offerLines = async (rt: Runtime) => {
    await rt.ctx.sink.settle();
    return (await rt.ctx.sink.read()).filter((e) => e.type === "resume_offered");
  };
  /** The TUI attaching (its provider catalog loaded): no session on the screen yet. */
  const catalog = { type: "catalog.updated", properties: {} };
  /** The user's first turn in the TUI: a session's model output (its creation alone comes while the TUI changes screens). */
  const attach = events.delta("ses_new00000000000000000000001");

  test("nothing before a session shows up (a toast then reaches nobody); the first session event brings one toast and one line, never a second", async () => {
    const next = await startAgain(["opencode"]);
    try {
      await onEvent(next, catalog);
      await onEvent(next, events.created("ses_new00000000000000000000001", { agent: "build" }));
      await f.timers.advance(60_000);
      await next.inFlight.settle(1_000);
      expect(offers()).toEqual([]);
      await onEvent(next, attach);
      await next.inFlight.settle(1_000);
      expect(offers()).toHaveLength(1);
      expect(offers()[0]).toMatchObject({ variant: "info" });
      expect(offers()[0]?.message).toMatch(new RegExp(`\\(${ROOT}\\) was interrupted and can be resumed: opencode -s ${ROOT}$`));
      expect((await offerLines(next)).map((e) => [e.sessionId, e.count])).toEqual([[ROOT, 1]]);

      await onEvent(next, events.created(OTHER, { agent: "build" }));
      await onEvent(next, events.aborted(OTHER));
      await f.timers.advance(60_000);
      await next.inFlight.settle(1_000);
      expect(offers()).toHaveLength(1);
      expect(await offerLines(next)).toHaveLength(1);
    } finally {
      await next.dispose();
    }
  });

  test.each([
    ["opencode", "-s", ROOT],
    ["/x/opencode", "--session", ROOT, "--agent", "build"],
    ["opencode", "--continue"],
  ])("`opencode -s <id>` is not offered the session it opens, nor `opencode -c` the one it continues: %s %s %s", async (...argv) => {
    const next = await startAgain(argv);
    try {
      await onEvent(next, attach);
      await f.timers.advance(60_000);
      await next.inFlight.settle(1_000);
      expect(offers()).toEqual([]);
      expect(await offerLines(next)).toEqual([]);
    } finally {
      await next.dispose();
    }
  });

  test("`opencode -s <id>` with another session to come back to: that one is offered", async () => {
    await onEvent(f.rt, events.created(OTHER, { agent: "build" }));
    await onEvent(f.rt, events.aborted(OTHER));
    f.clock.advance(1_000);
    const next = await startAgain(["opencode", "-s", ROOT]);
    try {
      await onEvent(next, attach);
      await f.timers.advance(60_000);
      await next.inFlight.settle(1_000);
      expect(offers().map((t) => t.message)).toEqual([expect.stringContaining(`opencode -s ${OTHER}`)]);
    } finally {
      await next.dispose();
    }
  });

  test("nothing to resume: no toast, no line", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    await onEvent(f.rt, events.delta(ROOT));
    await f.rt.inFlight.settle(1_000);
    expect(offers()).toEqual([]);
    expect(await f.audit("resume_offered")).toEqual([]);
  });
});
