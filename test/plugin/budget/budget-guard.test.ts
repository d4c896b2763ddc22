import { describe, expect, test } from "vitest";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { events, type PluginFixture, pluginFixture, pluginFixtureEach, ROOT, CHILD } from "../fixture.ts";

let f: PluginFixture;
pluginFixtureEach((made) => (f = made));

describe("active time (the activeTime budget)", () => {
  test("a busy that arrives while the session's record is still being created is not lost (OpenCode 1 does not await the event hook)", async () => {
    await onEvent(f.rt, events.created(ROOT));
    // The child's `busy` is handled before its `session.created` has written the record.
    const busyAt = f.clock.now();
    await onEvent(f.rt, events.status(CHILD, "busy"));
    await f.timers.advance(2_000);
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    expect(f.rt.sessions.peek(CHILD)?.budget.busySince).toBe(busyAt);
    await f.timers.advance(1_000);
    await onEvent(f.rt, events.status(CHILD, "idle"));
    expect(f.rt.sessions.peek(CHILD)?.budget).toMatchObject({ busySince: null, activeMs: 3_000 });
  });

  test("an idle before the record forgets the early busy", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.status(CHILD, "busy"));
    await onEvent(f.rt, events.status(CHILD, "idle"));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    expect(f.rt.sessions.peek(CHILD)?.budget).toMatchObject({ busySince: null, activeMs: 0 });
  });
});

describe("a raise counts once (issue 27)", () => {
  test("the same signed raise delivered twice (a copied queue file) is applied once and audited as a replay", async () => {
    const { applyBudgetRaise } = await import("../../../plugin/budget/budget-raises.ts");
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    const raise = { kind: "budget" as const, id: "raise-once", at: f.clock.now(), scope: "session" as const, add: { toolCalls: 2 }, by: "cli:user" };
    await applyBudgetRaise(f.rt.runner, f.rt.tracker, CHILD, raise);
    await applyBudgetRaise(f.rt.runner, f.rt.tracker, CHILD, { ...raise });
    expect(f.rt.sessions.peek(CHILD)?.budget.raises.map((r) => r.id)).toEqual(["raise-once"]);
    expect(await f.audit("directive_replayed")).toMatchObject([{ sessionId: CHILD, directiveId: "raise-once", kind: "budget" }]);
  });
});

describe("record reconciliation in the plugin (issue 27)", () => {
  test("a record rewritten on disk between two writes: counters and control come back, record_tampered names the fields", async () => {
    const { patchSessionRecord } = await import("../../harness/governance-files.ts");
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await f.rt.runner.step(CHILD, (r) => ({ next: r && { ...r, counters: { ...r.counters, toolCalls: 7 }, control: "stopping" as const }, effects: [] }));
    patchSessionRecord(f.rt.ctx.paths.root, CHILD, (r) => {
      r.counters.toolCalls = 0;
      r.control = "active";
    });
    const { next } = await f.rt.runner.step(CHILD, (r) => ({ next: r, effects: [] }));
    expect(next).toMatchObject({ control: "stopping", counters: { toolCalls: 7 } });
    expect(await f.audit("record_tampered")).toMatchObject([{ sessionId: CHILD, fields: expect.arrayContaining(["control", "counters.toolCalls"]) }]);
  });
});

describe("steps of one session run one after the other (issue 27 reconciliation)", () => {
  test("two steps at once: the second builds on the first's write, and nothing is reported as tampered", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await Promise.all([
      f.rt.runner.step(CHILD, (r) => ({ next: r && { ...r, control: "stopping" as const }, effects: [] })),
      f.rt.runner.step(CHILD, (r) => ({ next: r && { ...r, counters: { ...r.counters, toolCalls: 3 } }, effects: [] })),
    ]);
    expect(await f.rt.ctx.store.read(CHILD)).toMatchObject({ control: "stopping", counters: { toolCalls: 3 } });
    expect(await f.audit("record_tampered")).toEqual([]);
  });
});

describe("one budget notice per budget and scope (issue 28 §1)", () => {
  test("a warning given while a write of the record is under way is not given again after it (two budgets.agents entries)", async () => {
    const g = await pluginFixture({
      config: "budgets:\n  warnAt: 0.5\n  agents:\n    toolcap: { toolCalls: 6 }\n    other: { toolCalls: 100 }\n",
    });
    try {
      const { toolBefore } = await import("../../../plugin/opencode-1/tool-calls.ts");
      const { toolAfter } = await import("../../../plugin/opencode-1/tool-calls.ts");
      await onEvent(g.rt, events.created(ROOT));
      await onEvent(g.rt, events.created(CHILD, { parentID: ROOT, agent: "toolcap" }));
      let n = 0;
      const call = async () => {
        const input = { tool: "bash", sessionID: CHILD, callID: `call_${++n}` };
        await toolBefore(g.rt, input, { args: { command: `echo ${n}` } });
        await toolAfter(g.rt, input, { title: "bash", output: `out ${n}`, metadata: {} });
      };
      await call();
      await call();
      // A durable write of the child's record is under way when the third call crosses the warning threshold.
      const write = g.rt.runner.sessions.step(CHILD, (r) => ({ next: r, effects: [] }));
      await call();
      await write;
      // The next call and later signals check the budgets again (a tool call, OpenCode's usage event, a status).
      await call();
      const usage = { type: "session.updated", properties: { info: { id: CHILD, cost: 0, tokens: { input: 10, output: 1, reasoning: 0 } } } };
      await onEvent(g.rt, usage);
      await onEvent(g.rt, events.status(CHILD, "busy"));
      expect((await g.audit("budget_warning")).filter((e) => e.sessionId === CHILD)).toHaveLength(1);
      // And the in-memory counters lost nothing while the write was under way.
      expect(g.rt.sessions.peek(CHILD)?.counters.toolCalls).toBe(4);
    } finally {
      await g.close();
    }
  });
});

describe("a raise between a budget's check and its stop (found by the generated histories, lifecycle-model seed -1285638774)", () => {
  test.each(["session", "tree"] as const)("a %s raise applied while the exceedance is being written: no stop begins under the raised limit", async (scope) => {
    const config = scope === "session" ? "budgets:\n  default:\n    toolCalls: 2\n" : "budgets:\n  tree:\n    toolCalls: 2\n";
    const g = await pluginFixture({ config });
    try {
      const { applyBudgetRaise } = await import("../../../plugin/budget/budget-raises.ts");
      const { toolAfter, toolBefore } = await import("../../../plugin/opencode-1/tool-calls.ts");
      await onEvent(g.rt, events.created(ROOT));
      await onEvent(g.rt, events.created(CHILD, { parentID: ROOT }));
      let n = 0;
      const call = async () => {
        const input = { tool: "read", sessionID: CHILD, callID: `call_${++n}` };
        await toolBefore(g.rt, input, { args: { filePath: "x" } });
        await toolAfter(g.rt, input, { title: "read", output: `out ${n}`, metadata: {} });
      };
      await call();
      // The second call reaches the limit; the user's raise lands while its `budget_exceeded` line is being written.
      const raise = { kind: "budget" as const, id: "raise-between", at: g.clock.now(), scope, add: { toolCalls: 3 }, by: "cli:user" };
      await Promise.all([call(), applyBudgetRaise(g.rt.runner, g.rt.tracker, scope === "session" ? CHILD : ROOT, raise)]);
      expect(await g.audit("budget_exceeded")).toHaveLength(1);
      expect(g.rt.sessions.peek(CHILD)).toMatchObject({ control: "active", stop: null });
    } finally {
      await g.close();
    }
  });
});
