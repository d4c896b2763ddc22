import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { RESUME_OFFER_DELAY_MS } from "../../../plugin/sessions/resume-offer.ts";
import { events, type PluginFixture, pluginFixture } from "../fixture.ts";

const ROOT = "ses_root00000000000000000000001";
const CHILD = "ses_child0000000000000000000001";
const OTHER = "ses_other0000000000000000000001";

let f: PluginFixture;
beforeEach(async () => {
  f = await pluginFixture();
});
afterEach(() => f.close());

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

/** Issue 39: after Escape and quit, starting OpenCode again said nothing about the session to come back to. */
describe("a resumable session is offered once per start", () => {
  test("one toast naming the session and its opencode -s command, one resume_offered line; not again for later sessions", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    await onEvent(f.rt, events.aborted(ROOT));
    expect(f.rt.sessions.peek(ROOT)?.state).toBe("interrupted");
    await f.timers.advance(RESUME_OFFER_DELAY_MS);
    const offers = () => f.calls.toasts.filter((t) => t.message.includes(`opencode -s ${ROOT}`));
    expect(offers()).toHaveLength(1);
    expect(offers()[0]).toMatchObject({ variant: "info" });
    expect(offers()[0]?.message).toMatch(new RegExp(`\\(${ROOT}\\) was interrupted and can be resumed: opencode -s ${ROOT}$`));
    expect((await f.audit("resume_offered")).map((e) => [e.sessionId, e.count])).toEqual([[ROOT, 1]]);

    await onEvent(f.rt, events.created(OTHER, { agent: "build" }));
    await onEvent(f.rt, events.aborted(OTHER));
    await f.timers.advance(60_000);
    expect(f.calls.toasts.filter((t) => t.message.includes("can be resumed"))).toHaveLength(1);
    expect(await f.audit("resume_offered")).toHaveLength(1);
  });

  test("nothing to resume: no toast, no line", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    await f.timers.advance(RESUME_OFFER_DELAY_MS);
    expect(f.calls.toasts.filter((t) => t.message.includes("can be resumed"))).toEqual([]);
    expect(await f.audit("resume_offered")).toEqual([]);
  });
});
