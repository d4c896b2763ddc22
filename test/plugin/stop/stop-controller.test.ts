import { describe, expect, test } from "vitest";
import { claimAll, enqueue } from "../../../governance/stop/directive-queue.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { toolAfter } from "../../../plugin/opencode-1/tool-calls.ts";
import { toolBefore } from "../../../plugin/opencode-1/tool-calls.ts";
import { events, type PluginFixture, pluginFixtureEach, ROOT, CHILD } from "../fixture.ts";

const SECOND = 1_000;

let f: PluginFixture;
pluginFixtureEach(async (made) => {
  f = made;
  await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
  await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "governance-executor" }));
  f.busy.add(CHILD);
});

const control = () => f.rt.sessions.peek(CHILD)?.control;
async function requestStop(level: 1 | 2 | 3 = 1): Promise<void> {
  await enqueue(f.rt.ctx.paths, CHILD, { kind: "stop", id: `stop-${level}`, at: f.clock.now(), level, reason: "enough", by: "test" });
  await f.rt.stops.poke(CHILD);
}
let n = 0;
async function toolCall(sessionId = CHILD): Promise<string> {
  const input = { tool: "read", sessionID: sessionId, callID: `call_${++n}` };
  await toolBefore(f.rt, input, { args: { filePath: "x" } });
  const output = { title: "read", output: "OUT", metadata: {} };
  await toolAfter(f.rt, input, output);
  return output.output;
}
const notifications = async () => (await f.audit("parent_notified")).filter((e) => e.childId === CHILD);

describe("stop controller", () => {
  test("no tool call before the deadline: the parent is told, the child aborted, and stopped once OpenCode says idle", async () => {
    await requestStop();
    expect(control()).toBe("stopping");
    await f.timers.advance(5 * SECOND - 1);
    expect(f.calls.aborts).toEqual([]);
    await f.timers.advance(1);
    // The abort and the idle check run on real file I/O: wait for their outcome (no clock time passes).
    await expect.poll(() => control()).toBe("stopped");
    expect(f.calls.aborts).toEqual([CHILD]);
    expect(await notifications()).toHaveLength(1);
    expect((await claimAll(f.rt.ctx.paths, ROOT)).map((d) => d.kind)).toEqual(["notify"]);
    expect((await f.audit("session_stopped"))[0]).toMatchObject({ sessionId: CHILD, how: "hard-stop" });
    // The request it acted on is claimed as done, not audited as ignored; a later one is ignored, and says so.
    expect(await claimAll(f.rt.ctx.paths, CHILD)).toEqual([]);
    expect(await f.audit("stop_ignored")).toEqual([]);
    await requestStop(2);
    await expect.poll(async () => (await f.audit("stop_ignored")).length).toBe(1);
    expect((await f.audit("stop_ignored"))[0]).toMatchObject({ sessionId: CHILD, count: 1, because: "already stopped", requestIds: ["stop-2"] });
  });

  test("one stop request is begun once: the tool result that claims a request the queue look began does not hand it over again (issue 29 item 3)", async () => {
    const begun: string[] = [];
    const begin = f.rt.stops.begin.bind(f.rt.stops);
    f.rt.stops.begin = (id, stops) => {
      begun.push(...stops.map((d) => d.id));
      return begin(id, stops);
    };
    await requestStop();
    expect(control()).toBe("stopping");
    expect(begun).toContain("stop-1");
    begun.length = 0;
    // The delivery path: claims stop-1 and delivers its L1; the look began it already.
    const { claimAll: claim } = await import("../../../governance/stop/directive-queue.ts");
    const { deliverOnToolResult } = await import("../../../plugin/stop/directive-delivery.ts");
    f.rt.stops.inbox.mark(CHILD);
    expect(await deliverOnToolResult(f.rt.runner, f.rt.stops, CHILD, "OUT")).toContain("STOP");
    expect(await claim(f.rt.ctx.paths, CHILD)).toEqual([]);
    expect(begun).toEqual([]);
  });

  test("a child the abort does not stop: one retry, then a loud give-up; it stays stopping", async () => {
    f.stubborn.add(CHILD);
    await requestStop();
    await f.timers.advance(25 * SECOND);
    await expect.poll(async () => (await f.audit("stop_failed")).length).toBe(1);
    expect(f.calls.aborts).toEqual([CHILD, CHILD]);
    expect(control()).toBe("stopping");
    expect(await f.audit("stop_failed")).toHaveLength(1);
    expect(f.calls.toasts.filter((t) => t.variant === "error")).toHaveLength(1);
    expect(await notifications()).toHaveLength(1);
  });

  test("a turn that ends while stopping is compliance: stopped, parent told once", async () => {
    await requestStop();
    await onEvent(f.rt, events.idle(CHILD));
    expect(control()).toBe("stopped");
    await f.timers.advance(10 * SECOND);
    expect(f.calls.aborts).toEqual([]);
    expect(await notifications()).toHaveLength(1);
  });

  test("L1 → L2 → L3 on tool results; L3 aborts after its grace; a further call is refused and aborts at once", async () => {
    await requestStop();
    expect(await toolCall()).toMatch(/^⚠️ SESSION STOP REQUESTED/);
    expect(await toolCall()).toMatch(/^🛑 SESSION STOP/);
    expect(await toolCall()).toMatch(/^❌ SESSION TERMINATED/);
    expect(control()).toBe("stopped");
    await f.timers.advance(1_499);
    expect(f.calls.aborts).toEqual([]);
    await f.timers.advance(1);
    expect(f.calls.aborts).toEqual([CHILD]);
    f.busy.add(CHILD);
    await expect(toolCall()).rejects.toThrow(/SESSION TERMINATED/);
    await f.timers.advance(50);
    expect(f.calls.aborts).toEqual([CHILD, CHILD]);
    expect(await notifications()).toHaveLength(1);
    // The parent reads the notification on its next tool result, once.
    expect(await toolCall(ROOT)).toContain("SUBAGENT STOPPED");
    expect(await toolCall(ROOT)).toBe("OUT");
  });

  test("graceful: after L1 a child streaming its summary is not aborted; once it goes quiet for the deadline it is", async () => {
    await requestStop();
    await f.timers.advance(SECOND);
    expect(await toolCall()).toMatch(/^⚠️ SESSION STOP REQUESTED/);
    for (let i = 0; i < 8; i++) {
      await f.timers.advance(SECOND);
      await onEvent(f.rt, events.delta(CHILD));
    }
    // 9 s after the request, well past the 5 s deadline: still streaming, not aborted.
    expect(f.calls.aborts).toEqual([]);
    expect(control()).toBe("stopping");
    await f.timers.advance(5 * SECOND - 1);
    expect(f.calls.aborts).toEqual([]);
    await f.timers.advance(1);
    await expect.poll(() => f.calls.aborts).toEqual([CHILD]);
    expect((await f.audit("session_hard_stopped")).length).toBe(1);
  });

  test("graceful has a cap: streaming forever after L1 is aborted at request + stop.maxWait (60 s)", async () => {
    await requestStop();
    expect(await toolCall()).toMatch(/^⚠️ SESSION STOP REQUESTED/);
    for (let i = 0; i < 59; i++) {
      await f.timers.advance(SECOND);
      await onEvent(f.rt, events.delta(CHILD));
    }
    expect(f.calls.aborts).toEqual([]);
    await f.timers.advance(SECOND);
    await onEvent(f.rt, events.delta(CHILD));
    await expect.poll(() => f.calls.aborts).toEqual([CHILD]);
  });

  test("streaming before any directive reached it does not move the deadline (a stuck stream is aborted at 5 s)", async () => {
    await requestStop();
    for (let i = 0; i < 4; i++) {
      await f.timers.advance(SECOND);
      await onEvent(f.rt, events.delta(CHILD));
    }
    await f.timers.advance(SECOND);
    await expect.poll(() => f.calls.aborts).toEqual([CHILD]);
  });

  test("an Escape while the stop is pending: the parent is told the user interrupted it, not that it made no call in time", async () => {
    await requestStop();
    await onEvent(f.rt, events.aborted(CHILD));
    expect(control()).toBe("stopped");
    expect((await f.audit("parent_notified"))[0]).toMatchObject({ childId: CHILD, how: "user-abort" });
    expect(await toolCall(ROOT)).toContain("The user interrupted it (Escape) while the stop was pending");
  });

  test("a stop request for a child that already finished is drained as not running, and nothing is aborted", async () => {
    await f.rt.runner.step(CHILD, (r) => ({ next: r && { ...r, control: "completed" as const }, effects: [] }));
    await requestStop();
    await f.timers.advance(10 * SECOND);
    expect(f.calls.aborts).toEqual([]);
    expect((await f.audit("stop_ignored"))[0]).toMatchObject({ sessionId: CHILD, because: "not running" });
    expect(await claimAll(f.rt.ctx.paths, CHILD)).toEqual([]);
  });

  test("a child deleted with a stop and guidance queued: both are claimed, each audited as what it is", async () => {
    await toolCall(); // the child is running
    // Queued but not yet noticed: the queue watcher's fs.watch would otherwise begin the stop whenever its event comes
    // (sometimes before the deletion, under load), and a begun stop is not an ignored one.
    f.rt.stops.dispose();
    await enqueue(f.rt.ctx.paths, CHILD, { kind: "inject", id: "inject-1", at: f.clock.now(), text: "also check the docs", by: "cli" });
    await enqueue(f.rt.ctx.paths, CHILD, { kind: "stop", id: "stop-1", at: f.clock.now(), level: 1, reason: "enough", by: "cli" });
    await onEvent(f.rt, events.deleted(CHILD));
    expect(await claimAll(f.rt.ctx.paths, CHILD)).toEqual([]);
    expect(await f.audit("stop_ignored")).toMatchObject([{ sessionId: CHILD, count: 1, requestIds: ["stop-1"] }]);
    expect(await f.audit("inject_dropped")).toMatchObject([{ sessionId: CHILD, count: 1, because: "session ended", injectIds: ["inject-1"] }]);
  });

  test("guidance queued for a child whose parent is then Escaped is dropped with an audit line, not left queued forever", async () => {
    await toolCall(); // the child is running
    await enqueue(f.rt.ctx.paths, CHILD, { kind: "inject", id: "inject-1", at: f.clock.now(), text: "also check the docs", by: "cli" });
    await onEvent(f.rt, events.aborted(ROOT));
    expect((await f.audit("inject_dropped")).find((e) => e.sessionId === CHILD)).toMatchObject({
      injectIds: ["inject-1"],
      because: expect.stringMatching(/interrupted/),
    });
    expect(await claimAll(f.rt.ctx.paths, CHILD)).toEqual([]);
  });

  test("with nothing queued, the queue watcher polls nothing", async () => {
    await f.timers.advance(5 * SECOND);
    expect(f.rt.stops.polled()).toEqual([]);
  });
});
