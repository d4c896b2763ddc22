import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { onEvent } from "../../../plugin/hooks/event.ts";
import { events, type PluginFixture, pluginFixture } from "../fixture.ts";

const ROOT = "ses_root00000000000000000000001";
const CHILD = "ses_child0000000000000000000001";

let f: PluginFixture;
beforeEach(async () => {
  f = await pluginFixture();
});
afterEach(() => f.close());

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
