import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { WRITE_BEHIND_MS } from "../../../plugin/sessions/session-runtime.ts";
import { CONFIG_POLL_MS } from "../../../plugin/runtime/config-watcher.ts";
import { events, pluginFixture, type PluginFixture } from "../fixture.ts";

const SESSION = "ses_writebehind0000000000001";

describe("hot-path events are written behind, never lost", () => {
  let f: PluginFixture;
  beforeEach(async () => {
    f = await pluginFixture();
    await onEvent(f.rt, events.created(SESSION));
  });
  afterEach(() => f.close());

  const toolCall = (n: number) =>
    f.rt.runner.dispatchSoft(SESSION, { type: "tool_before", at: f.clock.now(), tool: "bash", callId: `c${n}`, summary: `echo ${n}` });

  test("a soft event is visible at once in memory and on disk after the write-behind delay", async () => {
    const view = await toolCall(1);
    expect(view?.counters.toolCalls).toBe(1);
    expect(f.rt.sessions.peek(SESSION)?.lastToolCall?.callId).toBe("c1");
    expect(f.onDisk(SESSION).counters.toolCalls).toBe(0);
    await f.timers.advance(WRITE_BEHIND_MS - 1);
    await f.rt.sessions.settled();
    expect(f.onDisk(SESSION).counters.toolCalls).toBe(0);
    await f.timers.advance(1);
    await f.rt.sessions.settled();
    expect(f.onDisk(SESSION).counters.toolCalls).toBe(1);
    expect(f.onDisk(SESSION).lastToolCall.callId).toBe("c1");
  });

  test("a durable change replays the pending soft events first, in order, in one write", async () => {
    for (let i = 1; i <= 3; i++) await toolCall(i);
    await f.rt.runner.dispatch(SESSION, { type: "action_remembered", at: f.clock.now(), action: "checked" });
    const r = f.onDisk(SESSION);
    expect(r.counters.toolCalls).toBe(3);
    expect(r.lastToolCall.callId).toBe("c3");
    expect(r.recentActions).toEqual(["bash echo 2", "bash echo 3", "checked"]); // in order: the soft tool calls first
  });

  test("while a durable change is being written, readers see it — and a soft event in that window stands on it", async () => {
    await toolCall(1); // an in-memory view exists, as on every busy session
    let decided!: () => void;
    const inStep = new Promise<void>((resolve) => (decided = resolve));
    const writing = f.rt.sessions.step(SESSION, (r) => {
      decided();
      return { next: r && { ...r, control: "stopping" as const }, effects: [] };
    });
    await inStep; // the step decided; the file is being written
    expect(f.onDisk(SESSION).control).toBe("active");
    // A tool result handled now must see the stop (it read `active` here, and carried no stop directive).
    expect(f.rt.sessions.peek(SESSION)?.control).toBe("stopping");
    await toolCall(2);
    expect(f.rt.sessions.peek(SESSION)).toMatchObject({ control: "stopping", counters: { toolCalls: 2 } });
    await writing;
    expect(f.rt.sessions.peek(SESSION)).toMatchObject({ control: "stopping", counters: { toolCalls: 2 } });
    await f.rt.flush();
    expect(f.onDisk(SESSION)).toMatchObject({ control: "stopping", counters: { toolCalls: 2 } });
  });

  test("flush (OpenCode's dispose) writes what is pending", async () => {
    await f.rt.runner.dispatchSoft(SESSION, { type: "model_step", at: f.clock.now() });
    await f.rt.flush();
    expect(f.onDisk(SESSION).counters.modelSteps).toBe(1);
  });

  test("an illegal event changes nothing and is audited", async () => {
    const other = "ses_neverseen000000000000001";
    await f.rt.runner.dispatch(other, { type: "idle", at: f.clock.now() });
    expect((await f.audit("illegal_transition")).map((e) => e.sessionId)).toEqual([other]);
    expect(fs.existsSync(path.join(f.dir, ".opencode", "governance", "sessions", `${other}.json`))).toBe(false);
  });
});

describe("config hand-edited while OpenCode runs", () => {
  test("a valid edit is picked up on the next poll; a broken edit is reported and the last good config stays", async () => {
    const f = await pluginFixture();
    try {
      expect(f.rt.ctx.config.phase).toBe("implementation");
      const file = path.join(f.dir, ".opencode", "governance.yaml");
      fs.writeFileSync(file, "phase: review\n");
      await f.timers.advance(CONFIG_POLL_MS);
      await expect.poll(() => f.rt.ctx.config.phase).toBe("review");
      fs.writeFileSync(file, "phase: review\ndelegation:\n  maxDepth: -1\n");
      await f.timers.advance(CONFIG_POLL_MS);
      await expect.poll(async () => (await f.audit("config_problem")).some((e) => e.line === 3)).toBe(true);
      expect(f.rt.ctx.config.phase).toBe("review");
      expect(f.rt.ctx.config.delegation.maxDepth).toBe(3);
    } finally {
      await f.close();
    }
  });
});
