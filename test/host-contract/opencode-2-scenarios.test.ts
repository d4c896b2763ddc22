/**
 * The shared scenario table (test/scenarios/governance-scenarios.ts) on the OpenCode 2 CONTRACT DOUBLE: the plugin's
 * own default export is shape-checked by the double's loader, then the adapter (plugin/host/opencode-2/) runs every
 * row through `session.hook`, `tool.hook`, `tool.transform` and the global event stream exactly as pinned in
 * docs/opencode-2.md. This proves the adapter against the contract, NOT against the OpenCode 2 host (no binary here):
 * `OPENCODE_BIN=<opencode 2> npm run test:e2e` is the real-host proof the day one is at hand.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { createFakeClock } from "../../governance/time/clock.ts";
import { SessionStore } from "../../governance/storage/session-store.ts";
import plugin from "../../plugin/index.ts";
import { setupV2 } from "../../plugin/host/opencode-2/setup.ts";
import type { V2Context } from "../../plugin/host/opencode-2/v2-types.ts";
import { createFakeTimers, T0 } from "../plugin/fixture.ts";
import { SCENARIOS } from "../scenarios/governance-scenarios.ts";
import { checkPluginModule, LOAD_ERROR, OpenCode2Double, PluginLoadError } from "./opencode-2-double.ts";

const PREFIX = "## Governance Context (opencode-governance)";

let dir: string;
let other: string;
let host: OpenCode2Double;
const clock = createFakeClock(T0);
let timers = createFakeTimers(clock);

/** The plugin as OpenCode 2 loads it, with the test's clock (the module's `setup` is this adapter). */
const withClock = { default: { id: plugin.id, setup: (ctx: V2Context) => setupV2(ctx, { clock, timers }) } };

const record = (id: string) => JSON.parse(fs.readFileSync(path.join(dir, ".opencode", "governance", "sessions", `${id}.json`), "utf8"));
const audit = () =>
  fs
    .readFileSync(path.join(dir, ".opencode", "governance", "audit.log"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; sessionId?: string; [k: string]: unknown });

async function flush(): Promise<void> {
  await host.drain();
  await timers.advance(0);
}

/** A session running a turn at depth d under `parent`, with the subagent call left pending. */
async function spawn(parent: string, agent: string, background = false): Promise<{ id: string; call: Promise<{ status: string; text: string }> }> {
  const before = host.spawned.length;
  const call = host.callTool(parent, "subagent", { agent, description: "work", prompt: "do it", ...(background ? { background } : {}) });
  let settled = false;
  void call.finally(() => (settled = true));
  for (let i = 0; i < 400 && host.spawned.length === before && !settled; i++) await new Promise((r) => setTimeout(r, 5));
  const id = host.spawned.at(-1);
  if (!id || host.spawned.length === before) throw new Error(`no child spawned: ${JSON.stringify(await Promise.race([call, Promise.resolve("pending")]))}`);
  await flush();
  return { id, call };
}

async function root(agent = "governance-coordinator"): Promise<string> {
  const id = host.createSession({ directory: dir, agent });
  await host.prompt(id);
  host.startExecution(id);
  await flush();
  return id;
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-"));
  other = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-other-"));
  clock.set(T0);
  timers = createFakeTimers(clock);
  host = new OpenCode2Double();
  host.config.experimental.subagent_depth = 4; // what `init` writes for OpenCode 2 (maxDepth + 1)
  await host.load(withClock, dir);
  await host.load(withClock, other);
});
afterEach(async () => {
  await host.unload();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(other, { recursive: true, force: true });
});

describe("OpenCode 2 loader contract", () => {
  test("the package's default export passes the loader's shape check ({ id, setup }, `server` ignored)", async () => {
    const mod = await import("../../plugin/index.ts");
    expect(checkPluginModule(mod).id).toBe("opencode-governance");
    expect(typeof mod.default.server).toBe("function");
  });
  test("a V1-only module is refused with the loader's exact error (the failure this adapter fixes)", () => {
    expect(() => checkPluginModule({ default: { id: "x", server: () => ({}) } })).toThrow(PluginLoadError);
    expect(() => checkPluginModule({ default: async () => ({}) })).toThrow(LOAD_ERROR);
  });
  test("the event stream is global: another location's instance keeps no record of this location's sessions", async () => {
    const id = await root();
    await host.request(id);
    await flush();
    expect(fs.existsSync(path.join(other, ".opencode", "governance", "sessions", `${id}.json`))).toBe(false);
    expect(record(id).sessionId).toBe(id);
  });
});

/** One implementation per row of the shared table. */
const RUN: Record<string, () => Promise<void>> = {
  async "prefix-every-step"() {
    const r = await root();
    for (let i = 0; i < 3; i++) {
      expect((await host.request(r)).system.join("\n")).toContain(PREFIX);
      await host.callTool(r, "shell", { command: "echo hi" });
    }
    const { id: child } = await spawn(r, "governance-executor");
    expect((await host.request(child)).system.join("\n")).toContain(PREFIX);
    // Housekeeping requests (title) get no prefix.
    expect((await host.request(r, "title")).system.join("\n")).not.toContain(PREFIX);
  },
  async "depth-halt"() {
    const r = await root();
    const high = await spawn(r, "governance-high");
    const exec = await spawn(high.id, "governance-executor");
    const verifier = await spawn(exec.id, "governance-verifier");
    expect(record(verifier.id).depth).toBe(3);
    const before = host.spawned.length;
    const halt = await host.callTool(verifier.id, "subagent", { agent: "governance-validator", description: "x", prompt: "x" });
    expect(halt.status).toBe("error");
    expect(halt.text).toContain("EMERGENCY_HALT");
    expect(host.spawned.length).toBe(before);
    await flush();
    expect(audit().find((e) => e.type === "emergency_halt")).toMatchObject({ sessionId: verifier.id, targetAgent: "governance-validator", childDepth: 4 });
  },
  async "leaf-refusal"() {
    const r = await root();
    const builder = await spawn(r, "governance-executor").then(({ id }) => spawn(id, "governance-builder"));
    const leaf = await host.callTool(builder.id, "subagent", { agent: "general", description: "x", prompt: "x" });
    expect(leaf.status).toBe("error");
    expect(leaf.text).toContain("DELEGATION BLOCKED: LEAF_AGENT");
    const off = await host.callTool(r, "subagent", { agent: "governance-builder", description: "x", prompt: "x" });
    expect(off.text).toContain("DELEGATION BLOCKED: TARGET_NOT_ALLOWED");
  },
  async "stop-ladder"() {
    const r = await root();
    const { id: child, call } = await spawn(r, "governance-executor");
    const asked = await host.callTool(r, "governance", { action: "stop", target: child, level: 1, reason: "wrong approach" });
    expect(asked.text).toContain("Stop requested");
    await flush();
    const run = () => ({ content: "loop-output" });
    const l1 = await host.callTool(child, "shell", { command: "x" }, run);
    expect(l1.text).toContain("⚠️ SESSION STOP REQUESTED");
    expect(l1.text).toContain("loop-output");
    const l2 = await host.callTool(child, "shell", { command: "x" }, run);
    expect(l2.text).toContain("🛑 SESSION STOP — IMMEDIATE");
    expect(l2.text).not.toContain("loop-output");
    const l3 = await host.callTool(child, "shell", { command: "x" }, run);
    expect(l3.text).toContain("❌ SESSION TERMINATED");
    // A rejecting execute.before: the call never runs.
    let ran = false;
    const refused = await host.callTool(child, "shell", { command: "x" }, () => {
      ran = true;
      return { content: "loop-output" };
    });
    expect(refused.status).toBe("error");
    expect(refused.text).toContain("SESSION TERMINATED");
    expect(ran).toBe(false);
    await timers.advance(10_000);
    await flush();
    expect(host.interrupts).toContain(child);
    expect(record(child).control).toBe("stopped");
    expect(record(child).stop.delivered).toEqual([1, 2, 3]);
    const result = await call;
    expect(result.status).toBe("error");
    expect(result.text).toContain("SUBAGENT INTERRUPTED");
  },
  async "hard-stop"() {
    const r = await root();
    const { id: child } = await spawn(r, "governance-executor");
    await host.callTool(r, "governance", { action: "stop", target: child, level: 1 });
    await flush();
    expect(record(child).control).toBe("stopping");
    // The child makes no tool call: the deadline (5 s) ends it through session.interrupt, checked idle.
    await timers.advance(4_000);
    expect(host.interrupts).not.toContain(child);
    await timers.advance(2_000);
    await flush();
    expect(host.interrupts).toContain(child);
    expect(record(child).control).toBe("stopped");
    expect(audit().filter((e) => e.type === "session_stopped" && e.sessionId === child)).toHaveLength(1);
  },
  async "inject-fenced"() {
    const r = await root();
    const { id: child } = await spawn(r, "governance-executor");
    const sent = await host.callTool(r, "governance", { action: "inject", target: child, text: "use the v2 API" });
    expect(sent.text).toContain("Guidance queued");
    await flush();
    const next = await host.callTool(child, "shell", { command: "x" }, () => ({ content: "ORIGINAL" }));
    expect(next.text).toContain("📝 USER GUIDANCE");
    expect(next.text).toContain("use the v2 API");
    expect(next.text).toMatch(/--- TOOL OUTPUT ---\nORIGINAL$/);
    const after = await host.callTool(child, "shell", { command: "x" }, () => ({ content: "ORIGINAL" }));
    expect(after.text).toBe("ORIGINAL");
  },
  async "escape-descendants"() {
    const r = await root();
    const a = await spawn(r, "governance-high");
    const b = await spawn(a.id, "governance-executor");
    // A background grandchild: OpenCode 2 does not interrupt it with its parent; governance must.
    const c = await spawn(b.id, "governance-verifier", true);
    host.interrupt(r, "user"); // Escape
    await flush();
    await timers.advance(5_000);
    await flush();
    for (const id of [r, a.id, b.id, c.id]) expect(record(id).state, id).toBe("interrupted");
    expect(host.interrupts).toContain(c.id);
    expect([...host.sessions.values()].filter((s) => s.running)).toEqual([]);
    // A superseding prompt is not Escape.
    const s = await root();
    host.interrupt(s, "superseded");
    await flush();
    expect(record(s).state).not.toBe("interrupted");
  },
  async "resume-2h"() {
    const r = await root();
    const { id: child } = await spawn(r, "governance-executor");
    await host.callTool(child, "shell", { command: "make build" });
    host.interrupt(r, "user");
    await flush();
    // A new OpenCode 2 process two hours later: a fresh instance over the same files.
    await host.unload();
    clock.set(T0 + 2 * 3_600_000);
    await host.load(withClock, dir);
    host.startExecution(r);
    await flush();
    const req = await host.request(r);
    // The resume context is in the status note after the last message, never in the (cached) system prompt.
    const note = req.messages.at(-1)!;
    expect(note.role).toBe("user");
    expect(note.text).toContain("## Resumed Session (opencode-governance)");
    expect(note.text).toContain("governance-executor");
    expect(req.system.join("\n")).toContain(PREFIX);
    expect(req.system.join("\n")).not.toContain("## Resumed Session");
  },
  async "parent-notified"() {
    const r = await root();
    const { id: child, call } = await spawn(r, "governance-executor");
    await host.callTool(r, "governance", { action: "stop", target: child, level: 3, reason: "enough" });
    await flush();
    await host.callTool(child, "shell", { command: "x" });
    await timers.advance(10_000);
    await flush();
    const result = await call;
    expect(result.text).toContain("SUBAGENT INTERRUPTED");
    expect(result.text.split("SUBAGENT INTERRUPTED").length - 1).toBe(1);
    expect(audit().filter((e) => e.type === "parent_notified")).toHaveLength(1);
  },
  async compaction() {
    const r = await root();
    await host.callTool(r, "shell", { command: "x" });
    const summarizer = (await host.request(r, "compaction")).system.join("\n");
    expect(summarizer).toContain("copy the following lines VERBATIM into the summary");
    expect(summarizer).toContain("Agent: governance-coordinator");
    host.compactionEnded(r, "manual");
    await flush();
    expect(record(r).counters.compactions).toBe(1);
    const after = await host.request(r);
    expect(after.messages.at(-1)?.text).toContain("## Post-Compaction Context Recovery (opencode-governance)");
    expect(after.system.join("\n")).not.toContain("## Post-Compaction Context Recovery");
  },
};

describe("the shared scenario table on the OpenCode 2 contract double", () => {
  test.each(SCENARIOS.map((s) => [s.id, s] as const))("%s", async (id) => {
    const run = RUN[id];
    expect(run, `no OpenCode 2 implementation for scenario ${id}`).toBeDefined();
    await run?.();
  });
});

describe("a process that stays up (issue 21 item 1 on OpenCode 2)", () => {
  test("coming back after 2 h to the same instance: the next prompt brings the resume context; after 49 h a fresh start", async () => {
    const r = await root();
    const { id: child } = await spawn(r, "governance-executor");
    await host.callTool(child, "shell", { command: "make build" });
    host.interrupt(r, "user");
    await flush();
    // The same OpenCode 2 process, two hours later: no new instance, only the user's next prompt.
    clock.set(T0 + 2 * 3_600_000);
    await host.prompt(r);
    host.startExecution(r);
    await flush();
    const note = (await host.request(r)).messages.at(-1)!;
    expect(note.text).toContain("## Resumed Session (opencode-governance)");
    expect(note.text).toContain("governance-executor");
    expect(audit().filter((e) => e.type === "session_resumed" && e.sessionId === r)).toHaveLength(1);
    // Idle past 48 h in the same process: the next prompt starts fresh, with no resume context.
    host.succeed(r);
    await flush();
    clock.set(T0 + 51 * 3_600_000);
    await host.prompt(r);
    host.startExecution(r);
    await flush();
    expect((await host.request(r)).messages.at(-1)?.text ?? "").not.toContain("## Resumed Session");
    expect(audit().some((e) => e.type === "session_expired" && e.sessionId === r)).toBe(true);
  });
});

describe("the prompt cache on OpenCode 2 (issue 16, decisions/0011)", () => {
  test("the system prompt is byte-identical between the steps of a session while the status note after the last message moves", async () => {
    const r = await root();
    const first = await host.request(r);
    await host.callTool(r, "shell", { command: "x" });
    host.compactionEnded(r, "auto");
    await flush();
    const second = await host.request(r);
    expect(second.system).toEqual(first.system);
    expect(first.messages).toHaveLength(1);
    expect(second.messages.at(-1)?.text).toContain("## Post-Compaction Context Recovery (opencode-governance)");
  });
});

void SessionStore;
