import { afterEach, describe, expect, test } from "vitest";
import { enqueue, peekAll } from "../../../governance/stop/directive-queue.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { messagesTransform } from "../../../plugin/opencode-1/model-step.ts";
import { toolAfter } from "../../../plugin/opencode-1/tool-calls.ts";
import { toolBefore } from "../../../plugin/opencode-1/tool-calls.ts";
import { Runtime } from "../../../plugin/wiring/runtime.ts";
import { events, type PluginFixture, pluginFixture, ROOT, CHILD } from "../fixture.ts";

let f: PluginFixture;
afterEach(() => f.close());

const part = (callID: string, status: string) => ({
  type: "message.part.updated",
  properties: { sessionID: ROOT, part: { type: "tool", sessionID: ROOT, callID, tool: "task", state: { status } } },
});
const spawn = (callID: string, agent = "general", more: { task_id?: string } = {}) =>
  toolBefore(f.rt, { tool: "task", sessionID: ROOT, callID }, { args: { subagent_type: agent, description: "d", prompt: "p", ...more } });
const step = async (rt: Runtime) => {
  const messages = [{ info: { sessionID: ROOT, role: "user", id: "msg_1" }, parts: [{ type: "text", text: "go" }] as object[] }];
  await messagesTransform(rt, { messages });
  return JSON.stringify(messages);
};

describe("across process boundaries, in one process (issue 26)", () => {
  test("an ordinary exit releases the root: a turn under way is interrupted (resumable), hosted by nobody, audited as an exit", async () => {
    f = await pluginFixture();
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.status(ROOT, "busy"));
    await toolBefore(f.rt, { tool: "read", sessionID: ROOT, callID: "c1" }, { args: {} });
    await f.rt.dispose();
    expect(f.onDisk(ROOT)).toMatchObject({ state: "interrupted", control: "active", hostedBy: null });
    const released = (await f.audit("session_released"))[0];
    expect(released).toMatchObject({ sessionId: ROOT, cause: "exit", was: "running", now: "interrupted" });
    expect(await f.audit("session_aborted")).toEqual([]);
  });

  test("an exit between the answer and OpenCode's idle ends the turn, not cuts it off: the root stays idle (decision 0052)", async () => {
    const answer = (finish: string) => ({
      type: "message.updated",
      properties: {
        info: {
          id: `msg_${finish}`,
          sessionID: ROOT,
          role: "assistant",
          finish,
          time: { created: 1, completed: 2 },
          tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
          cost: 0,
        },
      },
    });
    f = await pluginFixture();
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.status(ROOT, "busy"));
    await toolBefore(f.rt, { tool: "read", sessionID: ROOT, callID: "c1" }, { args: {} });
    await onEvent(f.rt, answer("tool-calls")); // a step that called tools: the loop goes on
    await onEvent(f.rt, { type: "message.part.updated", properties: { sessionID: ROOT, part: { type: "step-start", sessionID: ROOT } } });
    await onEvent(f.rt, answer("stop")); // the final answer; OpenCode's idle would come next
    await f.rt.dispose();
    expect(f.onDisk(ROOT)).toMatchObject({ state: "between_turn", control: "active", hostedBy: null });
    expect((await f.audit("session_released"))[0]).toMatchObject({ sessionId: ROOT, cutOff: false, now: "idle" });
  });

  test("a step that ends in tool calls is no answer: an exit then still cuts the turn off", async () => {
    f = await pluginFixture();
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.status(ROOT, "busy"));
    await toolBefore(f.rt, { tool: "read", sessionID: ROOT, callID: "c1" }, { args: {} });
    await onEvent(f.rt, {
      type: "message.updated",
      properties: {
        info: {
          id: "msg_2",
          sessionID: ROOT,
          role: "assistant",
          finish: "tool-calls",
          time: { created: 1, completed: 2 },
          tokens: { input: 1, output: 1, reasoning: 0, cache: { read: 0, write: 0 } },
          cost: 0,
        },
      },
    });
    await f.rt.dispose();
    expect(f.onDisk(ROOT)).toMatchObject({ state: "interrupted", hostedBy: null });
  });

  test("spawn slots: three calls OpenCode fails inside the tool (unknown agent) release theirs; the next spawns go through", async () => {
    f = await pluginFixture({ config: "concurrency:\n  perParent: 2\n" });
    await onEvent(f.rt, events.created(ROOT, { agent: "build" })); // OpenCode names the agent; an unnamed one may not spawn (decision 0024)
    for (const c of ["t1", "t2", "t3"]) {
      await spawn(c, "no-such-agent");
      await onEvent(f.rt, part(c, "error"));
    }
    expect(f.rt.budget.running.countFor(ROOT)).toBe(0);
    await spawn("t4");
    await spawn("t5");
    await expect(spawn("t6")).rejects.toThrow(/SPAWN REFUSED/);
    // A reservation whose call never reported its end is gone when the parent's turn ends.
    await onEvent(f.rt, events.status(ROOT, "idle"));
    expect(f.rt.budget.running.countFor(ROOT)).toBe(0);
  });

  test("spawn slots: a `task_id` continuation counts once — its reservation becomes the continued child when that one is busy again", async () => {
    f = await pluginFixture({ config: "concurrency:\n  perParent: 2\n" });
    await onEvent(f.rt, events.created(ROOT, { agent: "build" }));
    await spawn("t1");
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "general" }));
    await onEvent(f.rt, events.status(CHILD, "busy"));
    await onEvent(f.rt, events.status(CHILD, "idle")); // its task returned
    await onEvent(f.rt, part("t1", "completed"));
    expect(f.rt.budget.running.countFor(ROOT)).toBe(0);
    // Next turn: OpenCode 1 continues the same session (no session.created); it runs again, and is one subagent.
    f.parents.set(CHILD, { parentId: ROOT, agent: "general" });
    await spawn("t2", "general", { task_id: CHILD });
    await onEvent(f.rt, events.status(CHILD, "busy"));
    expect(f.rt.budget.running.countFor(ROOT)).toBe(1);
    await spawn("t3");
    await expect(spawn("t4")).rejects.toThrow(/SPAWN REFUSED/);
    await onEvent(f.rt, events.created("ses_child0000000000000000000002", { parentID: ROOT, agent: "general" }));
    expect(f.rt.budget.running.countFor(ROOT)).toBe(2);
  });

  test("a note shown on a model step stays on disk: the next process shows it again, a tool result carries it once", async () => {
    f = await pluginFixture();
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await enqueue(f.rt.ctx.paths, ROOT, { kind: "notify", id: `notify-${CHILD}`, at: f.clock.now(), childId: CHILD, how: "ladder" });
    f.rt.stops.inbox.mark(ROOT);
    expect(await step(f.rt)).toContain("SUBAGENT");
    expect((await peekAll(f.rt.ctx.paths, ROOT)).map((d) => d.kind)).toEqual(["notify"]);
    f.rt.halt(); // killed: nothing more is written
    const next = new Runtime({ directory: f.dir }, { clock: f.clock, timers: f.timers, api: f.api });
    await next.start();
    try {
      expect(await step(next)).toContain("SUBAGENT");
      const out = { title: "read", output: "file", metadata: {} };
      await toolAfter(next, { tool: "read", sessionID: ROOT, callID: "c2" }, out);
      expect(out.output.split("SUBAGENT").length - 1).toBe(1);
      expect(await peekAll(next.ctx.paths, ROOT)).toEqual([]);
      expect(await step(next)).not.toContain("SUBAGENT");
    } finally {
      await next.dispose();
    }
  });
});
