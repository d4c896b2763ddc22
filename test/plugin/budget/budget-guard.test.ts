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
