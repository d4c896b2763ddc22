/**
 * `BUN_BE_BUN=1 node_modules/.bin/opencode scripts/bench/step-cost.ts [steps] [warm-up steps]` (or `npx tsx …` for
 * node): the plugin's own work for one model step of scenario A — both transforms, both tool hooks and the ~17 events
 * OpenCode 1.18 sends a step (counted from the real host: message.updated ×4, part updates ×5, status ×2, …) — in
 * this process, with the real store on a temp folder and no host around it. Under the host's own Bun
 * (`BUN_BE_BUN=1`) it is the JavaScriptCore the plugin runs on; prints wall and CPU per step. docs/performance.md,
 * "Side by side", compares it with what the same work costs inside the host.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { onEvent } from "../../plugin/opencode-1/event-source.ts";
import { messagesTransform, systemTransform } from "../../plugin/opencode-1/model-step.ts";
import { toolAfter, toolBefore } from "../../plugin/opencode-1/tool-calls.ts";
import type { HostApi } from "../../plugin/runtime/host-api.ts";
import { Runtime } from "../../plugin/wiring/runtime.ts";

/** The SDK layer with no server behind it: every call succeeds at once. */
const fakeApi: HostApi = {
  abort: async () => true,
  status: async () => ({}),
  parentOf: async () => ({ parentId: null, agent: null }),
  toast: async () => undefined,
};
const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-stepsim-"));
const rt = new Runtime({ directory: dir }, { api: fakeApi });
await rt.start();
const sessionID = "ses_stepsim000000000000000001";
await onEvent(rt, { type: "session.created", properties: { sessionID, info: { id: sessionID, parentID: null, title: "New session" } } });
const messages: { info: Record<string, unknown>; parts: Record<string, unknown>[] }[] = [
  { info: { sessionID, role: "user", agent: "build", id: "msg_0" }, parts: [{ type: "text", text: "go", sessionID, messageID: "msg_0" }] },
];
const STEPS = Number(process.argv[2] ?? 2000);
let tokens = 0;
/** One model step that reads one file, as the host reports and hooks it (the order of a real step, roughly). */
async function step(i: number): Promise<void> {
  const mid = `msg_a${i}`;
  await onEvent(rt, { type: "session.status", properties: { sessionID, status: { type: "busy" } } });
  await systemTransform(rt, { sessionID }, { system: ["You are opencode."] });
  await messagesTransform(rt, { messages: messages as never });
  const info = { id: mid, sessionID, role: "assistant", providerID: "p", modelID: "m", agent: "build", mode: "build" };
  await onEvent(rt, { type: "message.updated", properties: { sessionID, info } });
  await onEvent(rt, { type: "message.part.updated", properties: { sessionID, part: { type: "step-start", sessionID } } });
  await onEvent(rt, {
    type: "message.part.updated",
    properties: { sessionID, part: { type: "tool", sessionID, callID: `c${i}`, tool: "read", state: { status: "pending" } } },
  });
  await onEvent(rt, {
    type: "message.part.updated",
    properties: { sessionID, part: { type: "tool", sessionID, callID: `c${i}`, tool: "read", state: { status: "running" } } },
  });
  const input = { tool: "read", sessionID, callID: `c${i}` };
  await toolBefore(rt, input, { args: { filePath: `notes/${i % 100}.md` } });
  await toolAfter(rt, input, { title: `notes/${i % 100}.md`, output: `<file>\n00001| # note ${i}\n00002| A small file.\n</file>`, metadata: {} });
  await onEvent(rt, {
    type: "message.part.updated",
    properties: { sessionID, part: { type: "tool", sessionID, callID: `c${i}`, tool: "read", state: { status: "completed", time: { start: 1, end: 2 } } } },
  });
  tokens += 1000;
  const used = { ...info, cost: 0, tokens: { input: tokens, output: 10, reasoning: 0, cache: { read: 0, write: 0 } } };
  await onEvent(rt, { type: "message.part.updated", properties: { sessionID, part: { type: "step-finish", sessionID } } });
  await onEvent(rt, { type: "message.updated", properties: { sessionID, info: used } });
  await onEvent(rt, { type: "message.updated", properties: { sessionID, info: used } });
  await onEvent(rt, {
    type: "session.updated",
    properties: {
      sessionID,
      info: { id: sessionID, title: "Reading notes", cost: 0, tokens: { input: tokens, output: 10, reasoning: 0, cache: { read: 0, write: 0 } } },
    },
  });
  await onEvent(rt, { type: "session.diff", properties: { sessionID, diff: [] } });
  await onEvent(rt, { type: "plugin.added", properties: {} });
  await onEvent(rt, { type: "plugin.added", properties: {} });
  await onEvent(rt, { type: "message.updated", properties: { sessionID, info: used } });
  await onEvent(rt, { type: "session.status", properties: { sessionID, status: { type: "busy" } } });
  messages.push({
    info: { sessionID, role: "assistant", id: mid },
    parts: [{ type: "tool", tool: "read", sessionID, messageID: mid, state: { status: "completed", output: "x".repeat(60) } }],
  });
  if (messages.length > 40) messages.splice(1, 1);
}
const WARM = Number(process.argv[3] ?? 200);
for (let i = 0; i < WARM; i++) await step(i); // warm
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = WARM; i < WARM + STEPS; i++) await step(i);
const t1 = performance.now();
const c1 = process.cpuUsage(c0);
console.log(
  `steps ${STEPS}: wall ${((t1 - t0) / STEPS).toFixed(3)} ms/step, cpu ${((c1.user + c1.system) / 1000 / STEPS).toFixed(3)} ms/step (user ${(c1.user / 1000 / STEPS).toFixed(3)})`,
);
await rt.dispose();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
