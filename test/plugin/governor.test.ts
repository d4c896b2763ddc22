import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { Governor } from "../../plugin/governor.ts";
import type { OpencodeApi } from "../../plugin/opencode-api.ts";
import { onEvent } from "../../plugin/hooks/event.ts";
import { StopController } from "../../plugin/stop-controller.ts";

/** No OpenCode server here: the SDK layer answers "nothing busy", which is all these tests need. */
const api: OpencodeApi = {
  abort: async () => true,
  status: async () => ({}),
  parentOf: async () => ({ parentId: null, agent: null }),
  toast: async () => undefined,
};

const SESSION = "ses_writebehind0000000000001";
const onDisk = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, ".opencode", "governance", "sessions", `${SESSION}.json`), "utf8"));

describe("hot-path events are written behind, never lost", () => {
  let dir: string;
  let gov: Governor;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-wb-"));
    gov = new Governor({ directory: dir, client: {} as never }, { api });
    await gov.start();
    await onEvent(gov, new StopController(gov), { type: "session.created", properties: { sessionID: SESSION, info: { id: SESSION } } });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const toolCall = (n: number) => gov.apply(SESSION, { type: "tool_before", at: Date.now(), tool: "bash", callId: `c${n}`, summary: `echo ${n}` }, { soft: true });

  test("a soft event is visible at once in memory and on disk after the write-behind delay", async () => {
    const view = await toolCall(1);
    expect(view?.counters.toolCalls).toBe(1);
    expect(gov.peek(SESSION)?.lastToolCall?.callId).toBe("c1");
    expect(onDisk(dir).counters.toolCalls).toBe(0);
    await new Promise((r) => setTimeout(r, 1_300));
    expect(onDisk(dir).counters.toolCalls).toBe(1);
    expect(onDisk(dir).lastToolCall.callId).toBe("c1");
  });

  test("a durable change replays the pending soft events first, in order, in one write", async () => {
    for (let i = 1; i <= 3; i++) await toolCall(i);
    await gov.update(SESSION, (r) => (r ? { ...r, recentActions: ["checked"] } : r));
    const r = onDisk(dir);
    expect(r.counters.toolCalls).toBe(3);
    expect(r.lastToolCall.callId).toBe("c3");
    expect(r.recentActions).toEqual(["checked"]);
  });

  test("flush (OpenCode's dispose) writes what is pending", async () => {
    await gov.apply(SESSION, { type: "model_step", at: Date.now() }, { soft: true });
    await gov.flush();
    expect(onDisk(dir).counters.modelSteps).toBe(1);
  });
});

describe("config hand-edited while OpenCode runs", () => {
  test("a valid edit is picked up; a broken edit is reported and the last good config stays", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-cfg-"));
    const gov = new Governor({ directory: dir, client: {} as never }, { api });
    try {
      await gov.start();
      expect(gov.config.phase).toBe("implementation");
      const file = path.join(dir, ".opencode", "governance.yaml");
      fs.writeFileSync(file, "phase: review\n");
      await expect.poll(() => gov.config.phase, { timeout: 6_000, interval: 200 }).toBe("review");
      fs.writeFileSync(file, "phase: review\ndelegation:\n  maxDepth: -1\n");
      await expect.poll(async () => (await gov.audit.read()).some((e) => e.type === "config_problem" && e.line === 3), { timeout: 6_000, interval: 200 }).toBe(true);
      expect(gov.config.phase).toBe("review");
      expect(gov.config.delegation.maxDepth).toBe(3);
    } finally {
      gov.stopWatching();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
