import { expect, test } from "vitest";
import { onEvent } from "../../plugin/opencode-1/event-source.ts";
import { systemTransform } from "../../plugin/opencode-1/model-step.ts";
import { toolAfter } from "../../plugin/opencode-1/tool-calls.ts";
import { toolBefore } from "../../plugin/opencode-1/tool-calls.ts";
import { MAINTENANCE_MS } from "../../plugin/sessions/maintenance.ts";
import { TASK_RESULTS } from "./fixtures/task-results.ts";
import { events, pluginFixture } from "./fixture.ts";

/**
 * Issue 21 item 7 (CONVENTIONS 14): a process that hosts sessions for days stays small. One plugin instance hosts
 * SESSIONS sessions (a root delegating to a child, tool calls, the child's task completing, the root's turn ending)
 * one after another, as a long-lived `opencode serve` would; once they ended and the periodic sweep ran, every map the
 * plugin keeps per session is back to its size before them. Before: the tracker, the store cache and the inbox kept
 * every session ever hosted (hosted 400, storeCache 400 after 200 roots).
 * The bench (scripts/bench, `long-lived` variant) measures RSS and heap of a real `opencode serve` over 1,000.
 */
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 200);
const HOUR = 3_600_000;
const id = (kind: string, i: number) => `ses_soak${kind}${String(i).padStart(20, "0")}`;

async function oneSession(f: Awaited<ReturnType<typeof pluginFixture>>, i: number): Promise<void> {
  const root = id("root", i);
  const child = id("kid", i);
  await onEvent(f.rt, events.created(root, { agent: "governance-coordinator" }));
  await onEvent(f.rt, events.status(root, "busy"));
  await systemTransform(f.rt, { sessionID: root }, { system: [] });
  const task = { tool: "task", sessionID: root, callID: `task_${i}` };
  await toolBefore(f.rt, task, { args: { subagent_type: "governance-high", description: "d", prompt: "p" } });
  await onEvent(f.rt, events.created(child, { parentID: root, agent: "governance-high" }));
  await onEvent(f.rt, events.status(child, "busy"));
  for (let c = 0; c < 3; c++) {
    const call = { tool: "read", sessionID: child, callID: `read_${i}_${c}` };
    await toolBefore(f.rt, call, { args: { filePath: "x" } });
    await toolAfter(f.rt, call, { title: "read", output: "OUT", metadata: {} });
  }
  await onEvent(f.rt, events.idle(child));
  await onEvent(f.rt, events.status(child, "idle"));
  await toolAfter(f.rt, task, { title: "task", output: TASK_RESULTS.completed, metadata: { sessionId: child } });
  await onEvent(f.rt, events.idle(root));
  await onEvent(f.rt, events.status(root, "idle"));
}

test(`one instance hosting ${SESSIONS} sessions over time: nothing it keeps grows with the sessions that ended`, async () => {
  const f = await pluginFixture();
  try {
    await f.rt.maintenance.settled();
    const before = f.rt.stats();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < SESSIONS; i++) {
      await oneSession(f, i);
      // Time passes between sessions, as in a real serve (the write-behind and the sweep run).
      if (i % 20 === 19) await f.timers.advance(MAINTENANCE_MS);
    }
    const during = f.rt.stats();
    expect(during.hosted).toBeGreaterThan(0);
    // Children end with their task; roots are forgotten once idle past the resume window's lower bound (1 h): their
    // next prompt is then a first activity again, which applies the 1 h / 48 h rules.
    // (The clock jumps instead of ticking through 60 sweeps: one sweep an hour later is what matters here.)
    await f.rt.sessions.flush();
    f.clock.set(f.clock.now() + HOUR);
    await f.rt.maintenance.sweep();
    await f.rt.sessions.settled();
    const after = f.rt.stats();
    const heapAfter = process.memoryUsage().heapUsed;
    console.info(JSON.stringify({ before, during, after, heapGrowthKiB: Math.round((heapAfter - heapBefore) / 1024) }));
    for (const [map, size] of Object.entries(after)) expect({ map, size }).toEqual({ map, size: before[map] ?? 0 });
    // What stays on disk is the truth: every record is there and final.
    const children = (await f.rt.ctx.store.list()).filter((r) => r.parentId !== null);
    expect(children).toHaveLength(SESSIONS);
    expect(children.every((r) => r.control === "completed" && r.end?.how === "completed")).toBe(true);
  } finally {
    await f.close();
  }
}, 120_000);
