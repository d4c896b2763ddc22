import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SessionStore } from "../../governance/session/session-store.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { createFakeClock, type FakeClock } from "../../governance/time/clock.ts";
import { onEvent } from "../../plugin/opencode-1/event-source.ts";
import { messagesTransform, systemTransform } from "../../plugin/opencode-1/model-step.ts";
import { toolAfter, toolBefore } from "../../plugin/opencode-1/tool-calls.ts";
import { Runtime } from "../../plugin/wiring/runtime.ts";
import { createFakeTimers, events, type FakeTimers, fakeApi, T0 } from "./fixture.ts";
import { TASK_RESULTS } from "./fixtures/task-results.ts";

/**
 * The world of the model-based lifecycle test (lifecycle-model.test.ts): one project folder, the processes that host
 * its sessions in turn, and the host's side of what OpenCode 1.18 does (tool calls, a task's end, the SDK aborts
 * governance asks for). The model is what the test believes; the world is what the plugin did.
 */
export const ROOT = "ses_modelroot000000000000000001";
export const PER_PARENT = 2;
/** Every child (agent `general`, no entry of its own) may make BUDGET tool calls: histories reach the budget often. */
export const BUDGET = 2;
export const CONFIG = `concurrency:\n  perParent: ${PER_PARENT}\nstop:\n  deadline: 30s\n  retryDeadline: 10s\nloops:\n  enabled: false\nbudgets:\n  default:\n    toolCalls: ${BUDGET}\n`;
export const MIN = 60_000;
export const HOUR = 60 * MIN;

export type ChildState = "running" | "done" | "interrupted" | "failed" | "stopped" | "orphaned";
export type Model = {
  live: boolean;
  /** How the last process ended (none = one is live or none ever started). */
  ended: "exit" | "kill" | "none";
  root: "none" | "running" | "idle" | "interrupted" | "orphaned";
  children: Map<string, { state: ChildState; callId: string }>;
  /** Sessions whose turn a kill cut off: the only ones that may read `orphaned`. */
  cutByKill: Set<string>;
  injects: Map<string, string>;
};

export class World {
  // On a RAM file system where there is one: every record write is an fsync, and a history makes hundreds of them.
  readonly dir = fs.mkdtempSync(path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "ocg-model-"));
  readonly clock: FakeClock = createFakeClock(T0);
  readonly sdk = fakeApi();
  rt: Runtime | undefined;
  timers: FakeTimers | undefined;
  proc = 0;
  seq = 0;
  seenAborts = 0;
  /** What the root's model read in persisted tool results (each note must appear once). */
  readonly rootResults: string[] = [];

  constructor() {
    fs.mkdirSync(path.join(this.dir, ".opencode"), { recursive: true });
    fs.writeFileSync(path.join(this.dir, ".opencode", "governance.yaml"), CONFIG);
  }
  id(prefix: string): string {
    return `ses_${prefix}${String(++this.seq).padStart(20, "0")}`;
  }
  get live(): Runtime {
    if (!this.rt) throw new Error("no process");
    return this.rt;
  }
  async start(): Promise<void> {
    const start = `p${++this.proc}`;
    this.timers = createFakeTimers(this.clock, 20);
    const self = { host: os.hostname(), pid: process.pid, start };
    const isGone = async (h: { start: string | null }) => h.start !== start;
    this.rt = new Runtime({ directory: this.dir }, { clock: this.clock, timers: this.timers, api: this.sdk.api, processes: { self, isGone, signals: false } });
    await this.rt.start();
    await this.rt.maintenance.settled();
    this.seenAborts = this.sdk.calls.aborts.length;
  }
  async records(): Promise<SessionRecord[]> {
    if (this.rt) await this.rt.sessions.flush();
    const store = new SessionStore({ projectDir: this.dir, clock: this.clock });
    return store.list();
  }
  cleanup(): void {
    this.rt?.halt();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export const toolPart = (sessionID: string, callID: string, status: "completed" | "error") => ({
  type: "message.part.updated",
  properties: { sessionID, part: { type: "tool", sessionID, callID, tool: "task", state: { status } } },
});

/** A model step of the root: the transforms, as OpenCode runs them; the notes it shows are not persisted. */
export async function rootStep(w: World): Promise<void> {
  await systemTransform(w.live, { sessionID: ROOT }, { system: [] });
  await messagesTransform(w.live, { messages: [{ info: { sessionID: ROOT, role: "user", id: "msg_u" }, parts: [{ type: "text", text: "go" }] }] });
}

/** A tool call of a session that returns (before and after); the output as the model reads it. */
export async function toolCall(w: World, sessionID: string, tool = "read"): Promise<string | undefined> {
  const callID = `call_${++w.seq}`;
  try {
    await toolBefore(w.live, { tool, sessionID, callID }, { args: { filePath: "x" } });
  } catch {
    await onEvent(w.live, toolPart(sessionID, callID, "error"));
    return undefined;
  }
  const out = { title: tool, output: "file text", metadata: {} };
  await toolAfter(w.live, { tool, sessionID, callID }, out);
  if (sessionID === ROOT) w.rootResults.push(out.output);
  return out.output;
}

/** The host carries out the SDK aborts governance asked for: a busy child is aborted and its task returns "Task cancelled". */
export async function hostAborts(m: Model, w: World): Promise<void> {
  while (w.rt && w.seenAborts < w.sdk.calls.aborts.length) {
    const id = w.sdk.calls.aborts[w.seenAborts++]!;
    const child = m.children.get(id);
    if (child?.state !== "running") continue;
    child.state = "stopped";
    await onEvent(w.live, events.aborted(id));
    await onEvent(w.live, events.status(id, "idle"));
    await onEvent(w.live, events.idle(id));
    await endTask(w, id, child.callId, TASK_RESULTS.aborted);
  }
}

export async function endTask(w: World, childId: string, callId: string, output: string): Promise<void> {
  const out = { title: "task", output, metadata: { sessionId: childId } };
  await toolAfter(w.live, { tool: "task", sessionID: ROOT, callID: callId }, out);
  w.rootResults.push(out.output);
  await onEvent(w.live, toolPart(ROOT, callId, "completed"));
}

export const running = (m: Model) => [...m.children].filter(([, c]) => c.state === "running").map(([id]) => id);
