import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AuditEvent } from "../../governance/storage/audit-log.ts";
import { createFakeClock, type FakeClock } from "../../governance/time/clock.ts";
import { afterEach, beforeEach } from "vitest";
import type { HostApi } from "../../plugin/runtime/host-api.ts";
import { Runtime } from "../../plugin/wiring/runtime.ts";
import type { TimerHandle, Timers, TimerTask } from "../../plugin/runtime/timers.ts";

/** Epoch of every fixture's clock: Tue 3 Feb 2026 10:00 UTC. */
export const T0 = Date.UTC(2026, 1, 3, 10, 0, 0);

type Entry = { id: number; at: number; fn: TimerTask; every?: number };

/** Timers driven by the fake clock: nothing fires until the test advances time. */
export interface FakeTimers extends Timers {
  /** Moves the clock forward, firing every timer that falls due in order, letting each one's async work run. */
  advance(ms: number): Promise<void>;
  pending(): number;
}

/** Lets promise chains and fs callbacks started by a timer run (one macrotask turn each, no wall-clock wait). */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** `slowMs`: how long a fired timer's work may stay busy before time moves on anyway (the model-based test uses less). */
export function createFakeTimers(clock: FakeClock, slowMs = 500): FakeTimers {
  let seq = 0;
  const entries = new Map<number, Entry>();
  let timerAdded: (() => void) | undefined;
  const add = (fn: TimerTask, ms: number, every?: number): TimerHandle => {
    const id = ++seq;
    timerAdded?.();
    entries.set(id, { id, at: clock.now() + Math.max(0, ms), fn, ...(every !== undefined ? { every: Math.max(1, every) } : {}) });
    return { id };
  };
  return {
    setTimeout: (fn, ms) => add(fn, ms),
    setInterval: (fn, ms) => add(fn, ms, ms),
    clear(handle) {
      if (handle) entries.delete(handle.id as number);
    },
    pending: () => entries.size,
    async advance(ms) {
      const until = clock.now() + ms;
      const running = new Set<Promise<unknown>>();
      const nextDue = () => [...entries.values()].filter((e) => e.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      for (;;) {
        // Work a fired timer started (file writes, SDK calls) runs until it is done, or blocks on a later timer,
        // before time moves on: as on a real clock, where milliseconds of I/O finish long before the next tick.
        while (running.size > 0) {
          // Done, or waiting for a timer it just set (fire it next), or stuck on I/O or a later timer (move on).
          let wake: (() => void) | undefined;
          const added = new Promise<void>((resolve) => (wake = resolve));
          timerAdded = wake;
          const why = await Promise.race([
            Promise.allSettled([...running]).then(() => "done"),
            added.then(() => "timer"),
            new Promise<string>((resolve) => setTimeout(() => resolve("slow"), slowMs).unref()),
          ]);
          timerAdded = undefined;
          if (why !== "done") break;
        }
        await settle(5);
        const due = nextDue();
        if (!due) break;
        clock.set(Math.max(clock.now(), due.at));
        // An interval re-arms from now: after the wall clock was moved (clock.set), it fires once, not once per missed
        // period (Node's timers run on the monotonic clock and never catch up).
        if (due.every !== undefined) due.at = clock.now() + due.every;
        else entries.delete(due.id);
        const work = due.fn();
        if (work) {
          running.add(work);
          void work.finally(() => running.delete(work));
        }
      }
      clock.set(until);
      await settle();
    },
  };
}

/** The SDK layer with no server: records what governance asked of OpenCode; `busy` says which sessions are running. */
export function fakeApi() {
  const calls = { aborts: [] as string[], toasts: [] as { message: string; variant: string }[] };
  const busy = new Set<string>();
  /** Sessions an SDK abort does not stop (a stuck stream). */
  const stubborn = new Set<string>();
  const parents = new Map<string, { parentId: string | null; agent: string | null }>();
  const api: HostApi = {
    abort: async (id) => {
      calls.aborts.push(id);
      if (!stubborn.has(id)) busy.delete(id);
      return true;
    },
    status: async () => Object.fromEntries([...busy].map((id) => [id, "busy"])),
    parentOf: async (id) => parents.get(id) ?? { parentId: null, agent: null },
    toast: async (message, variant) => {
      calls.toasts.push({ message, variant });
    },
  };
  return { api, calls, busy, stubborn, parents };
}

export type PluginFixture = Awaited<ReturnType<typeof pluginFixture>>;

/** The root session and its child most hook tests play. */
export const ROOT = "ses_root00000000000000000000001";
export const CHILD = "ses_child0000000000000000000001";

/**
 * A fresh {@link pluginFixture} for each test of the calling file or `describe`, handed to `use` (which may set up
 * sessions before the test), and closed after it.
 */
export function pluginFixtureEach(use: (f: PluginFixture) => unknown): void {
  let made: PluginFixture | undefined;
  beforeEach(async () => {
    made = await pluginFixture();
    await use(made);
  });
  afterEach(() => made?.close());
}

/** A started plugin runtime over a real temp project, with a fake clock, fake timers and a fake SDK. */
export async function pluginFixture(options: { config?: string; userConfig?: string } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-plugin-"));
  // The user's own governance config ($XDG_CONFIG_HOME/opencode/governance.yaml) lives in the fixture's folder too.
  const savedXdg = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = path.join(dir, "user-config");
  if (options.userConfig !== undefined) {
    fs.mkdirSync(path.join(dir, "user-config", "opencode"), { recursive: true });
    fs.writeFileSync(path.join(dir, "user-config", "opencode", "governance.yaml"), options.userConfig);
  }
  if (options.config !== undefined) {
    fs.mkdirSync(path.join(dir, ".opencode"), { recursive: true });
    fs.writeFileSync(path.join(dir, ".opencode", "governance.yaml"), options.config);
  }
  const clock = createFakeClock(T0);
  const timers = createFakeTimers(clock);
  const sdk = fakeApi();
  const rt = new Runtime({ directory: dir }, { clock, timers, api: sdk.api });
  await rt.start();
  return {
    dir,
    rt,
    clock,
    timers,
    ...sdk,
    audit: async (type?: string): Promise<AuditEvent[]> => {
      await rt.ctx.sink.settle();
      const all = await rt.ctx.sink.read();
      return type ? all.filter((e) => e.type === type) : all;
    },
    /** The record as written on disk (not the in-memory view). */
    onDisk: (id: string) => JSON.parse(fs.readFileSync(path.join(dir, ".opencode", "governance", "sessions", `${id}.json`), "utf8")),
    async close() {
      await rt.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = savedXdg;
    },
  };
}

/** OpenCode's bus events, as the 1.18 runtime sends them. */
export const events = {
  created: (id: string, info: { parentID?: string; agent?: string } = {}) => ({
    type: "session.created",
    properties: { sessionID: id, info: { id, ...info } },
  }),
  idle: (id: string) => ({ type: "session.idle", properties: { sessionID: id } }),
  aborted: (id: string) => ({ type: "session.error", properties: { sessionID: id, error: { name: "MessageAbortedError" } } }),
  errored: (id: string, name = "APIError") => ({ type: "session.error", properties: { sessionID: id, error: { name } } }),
  deleted: (id: string) => ({ type: "session.deleted", properties: { sessionID: id, info: { id } } }),
  compacted: (id: string) => ({ type: "session.compacted", properties: { sessionID: id } }),
  status: (id: string, type: string) => ({ type: "session.status", properties: { sessionID: id, status: { type } } }),
  todos: (id: string, statuses: string[]) => ({ type: "todo.updated", properties: { sessionID: id, todos: statuses.map((status) => ({ status })) } }),
  /** One streamed chunk of the session's model output. */
  delta: (id: string) => ({ type: "message.part.delta", properties: { sessionID: id, messageID: "msg_1", partID: "prt_1", field: "text", delta: "." } }),
};
