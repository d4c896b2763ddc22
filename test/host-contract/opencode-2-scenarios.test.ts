/**
 * The shared scenario table (test/scenarios/governance-scenarios.ts) on the OpenCode 2 CONTRACT DOUBLE: the plugin's
 * own default export is shape-checked by the double's loader, then the adapter (plugin/opencode-2/) runs every
 * row through `session.hook`, `tool.hook`, `tool.transform` and the global event stream exactly as pinned in
 * docs/opencode-2.md. The table runs once per known variant of the released host (issue 25 item 3): the release
 * line's `context` without `kind`, a pre-release build's with `kind`, `session.interrupt` taking `continue` (2.0.18–
 * 2.0.21) and one refusing unknown keys. This proves the adapter against the contract, NOT against the OpenCode 2
 * host (no binary here): `OPENCODE_BIN=<opencode 2> npm run test:e2e` is the real-host proof the day one is at hand.
 */
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { T0 } from "../plugin/fixture.ts";
import { SCENARIOS } from "../scenarios/governance-scenarios.ts";
import { checkPluginModule, type DoubleOptions, LOAD_ERROR, OpenCode2Double, PluginLoadError } from "./opencode-2-double.ts";
import { PREFIX, V2Fixture } from "./v2-fixture.ts";

const f = new V2Fixture();

beforeEach(() => f.start());
afterEach(() => f.stop());

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
    const id = await f.root();
    await f.host.request(id);
    await f.flush();
    expect(fs.existsSync(path.join(f.other, ".opencode", "governance", "sessions", `${id}.json`))).toBe(false);
    expect(f.record(id).sessionId).toBe(id);
  });
});

describe("the three config layers on OpenCode 2 (issue 30: the same loading as OpenCode 1)", () => {
  test("the organisation's maxDepth 1 holds against a project's 16: the depth-2 spawn is halted, policy_ceiling audited", async () => {
    await f.host.unload();
    const policy = path.join(f.other, "policy.yaml");
    fs.writeFileSync(policy, "delegation:\n  maxDepth: 1\n", { mode: 0o644 });
    fs.mkdirSync(path.join(f.dir, ".opencode"), { recursive: true });
    fs.writeFileSync(path.join(f.dir, ".opencode", "governance.yaml"), "delegation:\n  maxDepth: 16\n");
    const saved = process.env.OPENCODE_GOVERNANCE_POLICY;
    process.env.OPENCODE_GOVERNANCE_POLICY = policy;
    try {
      f.host = new OpenCode2Double();
      f.host.config.experimental.subagent_depth = 4;
      await f.host.load(f.module, f.dir);
      const r = await f.root();
      const exec = await f.spawn(r, "governance-executor");
      const halt = await f.host.callTool(exec.id, "subagent", { agent: "governance-builder", description: "x", prompt: "x" });
      expect(halt.status).toBe("error");
      expect(halt.text).toContain("EMERGENCY_HALT");
      await f.flush();
      expect(f.audit().find((e) => e.type === "policy_ceiling")?.refused).toEqual([
        { path: "delegation.maxDepth", layer: "project", value: "16", ceiling: "1", ceilingLayer: "organisation" },
      ]);
    } finally {
      if (saved === undefined) delete process.env.OPENCODE_GOVERNANCE_POLICY;
      else process.env.OPENCODE_GOVERNANCE_POLICY = saved;
    }
  });
});

/** One implementation per row of the shared table. */
const RUN: Record<string, () => Promise<void>> = {
  async "prefix-every-step"() {
    const r = await f.root();
    for (let i = 0; i < 3; i++) {
      expect((await f.host.request(r)).system.join("\n")).toContain(PREFIX);
      await f.host.callTool(r, "shell", { command: "echo hi" });
    }
    const { id: child } = await f.spawn(r, "governance-executor");
    expect((await f.host.request(child)).system.join("\n")).toContain(PREFIX);
    // Housekeeping requests (title) get no prefix.
    expect((await f.host.request(r, "title")).system.join("\n")).not.toContain(PREFIX);
  },
  async "depth-halt"() {
    const r = await f.root();
    const high = await f.spawn(r, "governance-high");
    const exec = await f.spawn(high.id, "governance-executor");
    const verifier = await f.spawn(exec.id, "governance-verifier");
    expect(f.record(verifier.id).depth).toBe(3);
    const before = f.host.spawned.length;
    const halt = await f.host.callTool(verifier.id, "subagent", { agent: "governance-validator", description: "x", prompt: "x" });
    expect(halt.status).toBe("error");
    expect(halt.text).toContain("EMERGENCY_HALT");
    expect(f.host.spawned.length).toBe(before);
    await f.flush();
    expect(f.audit().find((e) => e.type === "emergency_halt")).toMatchObject({ sessionId: verifier.id, targetAgent: "governance-validator", childDepth: 4 });
  },
  async "leaf-refusal"() {
    const r = await f.root();
    const builder = await f.spawn(r, "governance-executor").then(({ id }) => f.spawn(id, "governance-builder"));
    const leaf = await f.host.callTool(builder.id, "subagent", { agent: "general", description: "x", prompt: "x" });
    expect(leaf.status).toBe("error");
    expect(leaf.text).toContain("DELEGATION BLOCKED: LEAF_AGENT");
    const off = await f.host.callTool(r, "subagent", { agent: "governance-builder", description: "x", prompt: "x" });
    expect(off.text).toContain("DELEGATION BLOCKED: TARGET_NOT_ALLOWED");
  },
  async "stop-ladder"() {
    const r = await f.root();
    const { id: child, call } = await f.spawn(r, "governance-executor");
    const asked = await f.host.callTool(r, "governance", { action: "stop", target: child, level: 1, text: "wrong approach" });
    expect(asked.text).toContain("Stop requested");
    await f.flush();
    const run = () => ({ content: "loop-output" });
    const l1 = await f.host.callTool(child, "shell", { command: "x" }, run);
    expect(l1.text).toContain("⚠️ SESSION STOP REQUESTED");
    expect(l1.text).toContain("loop-output");
    // The tool's `text` is the stop's reason (issue 31: one free-text argument for inject and stop).
    expect(l1.text).toContain("wrong approach");
    const l2 = await f.host.callTool(child, "shell", { command: "x" }, run);
    expect(l2.text).toContain("🛑 SESSION STOP — IMMEDIATE");
    expect(l2.text).not.toContain("loop-output");
    const l3 = await f.host.callTool(child, "shell", { command: "x" }, run);
    expect(l3.text).toContain("❌ SESSION TERMINATED");
    // A rejecting execute.before: the call never runs.
    let ran = false;
    const refused = await f.host.callTool(child, "shell", { command: "x" }, () => {
      ran = true;
      return { content: "loop-output" };
    });
    expect(refused.status).toBe("error");
    expect(refused.text).toContain("SESSION TERMINATED");
    expect(ran).toBe(false);
    await f.timers.advance(10_000);
    await f.flush();
    expect(f.host.interrupts).toContain(child);
    expect(f.record(child).control).toBe("stopped");
    expect(f.record(child).stop.delivered).toEqual([1, 2, 3]);
    const result = await call;
    expect(result.status).toBe("error");
    expect(result.text).toContain("SUBAGENT STOPPED");
    // The child's last call named as the model can call it on OpenCode 2 (2.0.15 has no `bash`): issue 40.
    expect(result.text).toContain("Its last tool call: `shell`");
  },
  async "hard-stop"() {
    const r = await f.root();
    const { id: child } = await f.spawn(r, "governance-executor");
    await f.host.callTool(r, "governance", { action: "stop", target: child, level: 1 });
    await f.flush();
    expect(f.record(child).control).toBe("stopping");
    // The child makes no tool call: the deadline (5 s) ends it through session.interrupt, checked idle.
    await f.timers.advance(4_000);
    expect(f.host.interrupts).not.toContain(child);
    await f.timers.advance(2_000);
    await f.flush();
    expect(f.host.interrupts).toContain(child);
    expect(f.record(child).control).toBe("stopped");
    expect(f.audit().filter((e) => e.type === "session_stopped" && e.sessionId === child)).toHaveLength(1);
  },
  async "inject-fenced"() {
    const r = await f.root();
    const { id: child } = await f.spawn(r, "governance-executor");
    const sent = await f.host.callTool(r, "governance", { action: "inject", target: child, text: "use the v2 API" });
    expect(sent.text).toContain("Guidance queued");
    await f.flush();
    const next = await f.host.callTool(child, "shell", { command: "x" }, () => ({ content: "ORIGINAL" }));
    // Sent by the root's governance tool: an agent's guidance, labelled as such (issue 27), fenced like a user's.
    expect(next.text).toContain("📝 AGENT GUIDANCE (relayed from agent governance-coordinator");
    expect(next.text).toContain("use the v2 API");
    expect(next.text).toMatch(/--- TOOL OUTPUT ---\nORIGINAL$/);
    const after = await f.host.callTool(child, "shell", { command: "x" }, () => ({ content: "ORIGINAL" }));
    expect(after.text).toBe("ORIGINAL");
  },
  async "escape-descendants"() {
    const r = await f.root();
    const a = await f.spawn(r, "governance-high");
    const b = await f.spawn(a.id, "governance-executor");
    // A background grandchild: OpenCode 2 does not interrupt it with its parent; governance must.
    const c = await f.spawn(b.id, "governance-verifier", true);
    f.host.interrupt(r, "user"); // Escape
    await f.flush();
    await f.timers.advance(5_000);
    await f.flush();
    for (const id of [r, a.id, b.id, c.id]) expect(f.record(id).state, id).toBe("interrupted");
    expect(f.host.interrupts).toContain(c.id);
    expect([...f.host.sessions.values()].filter((s) => s.running)).toEqual([]);
    // A superseding prompt is not Escape.
    const s = await f.root();
    f.host.interrupt(s, "superseded");
    await f.flush();
    expect(f.record(s).state).not.toBe("interrupted");
  },
  async "resume-2h"() {
    const r = await f.root();
    const { id: child } = await f.spawn(r, "governance-executor");
    await f.host.callTool(child, "shell", { command: "make build" });
    f.host.interrupt(r, "user");
    await f.flush();
    // A new OpenCode 2 process two hours later: a fresh instance over the same files.
    await f.host.unload();
    f.clock.set(T0 + 2 * 3_600_000);
    await f.host.load(f.module, f.dir);
    f.host.startExecution(r);
    await f.flush();
    const req = await f.host.request(r);
    // The resume context is in the status note after the last message, never in the (cached) system prompt.
    const note = req.messages.at(-1)!;
    expect(note.role).toBe("user");
    expect(note.text).toContain("## Resumed Session (opencode-governance)");
    expect(note.text).toContain("governance-executor");
    expect(req.system.join("\n")).toContain(PREFIX);
    expect(req.system.join("\n")).not.toContain("## Resumed Session");
  },
  async "parent-notified"() {
    const r = await f.root();
    const { id: child, call } = await f.spawn(r, "governance-executor");
    await f.host.callTool(r, "governance", { action: "stop", target: child, level: 3, text: "enough" });
    await f.flush();
    await f.host.callTool(child, "shell", { command: "x" });
    await f.timers.advance(10_000);
    await f.flush();
    const result = await call;
    expect(result.text).toContain("SUBAGENT STOPPED");
    expect(result.text.split("SUBAGENT STOPPED").length - 1).toBe(1);
    expect(f.audit().filter((e) => e.type === "parent_notified")).toHaveLength(1);
  },
  async compaction() {
    const r = await f.root();
    await f.host.callTool(r, "shell", { command: "x" });
    const summarizer = (await f.host.request(r, "compaction")).system.join("\n");
    expect(summarizer).toContain("copy the following lines VERBATIM into the summary");
    expect(summarizer).toContain("Agent: governance-coordinator");
    f.host.compactionEnded(r, "manual");
    await f.flush();
    expect(f.record(r).counters.compactions).toBe(1);
    const after = await f.host.request(r);
    expect(after.messages.at(-1)?.text).toContain("## Post-Compaction Context Recovery (opencode-governance)");
    expect(after.system.join("\n")).not.toContain("## Post-Compaction Context Recovery");
  },
};

/** The variants of the released host the table runs on (opencode-2-double.ts says what each is). */
const VARIANTS: readonly (readonly [string, DoubleOptions])[] = [
  ["release line (context without kind)", {}],
  ["pre-release context with kind", { contextKind: "present" }],
  ["interrupt takes continue (2.0.18-2.0.21)", { interruptInput: "continue" }],
  ["interrupt refuses unknown keys", { interruptInput: "strict" }],
];

describe.each(VARIANTS)("the shared scenario table on the OpenCode 2 contract double: %s", (_name, options) => {
  beforeEach(async () => {
    await f.stop();
    await f.start(options);
  });
  test.each(SCENARIOS.map((s) => [s.id, s] as const))("%s", async (id) => {
    const run = RUN[id];
    expect(run, `no OpenCode 2 implementation for scenario ${id}`).toBeDefined();
    await run?.();
    await f.flush();
    expect(f.audit().filter((e) => e.type === "governance_gap")).toEqual([]);
  });
});

describe("a process that stays up (issue 21 item 1 on OpenCode 2)", () => {
  test("coming back after 2 h to the same instance: the next prompt brings the resume context; after 49 h a fresh start", async () => {
    const r = await f.root();
    const { id: child } = await f.spawn(r, "governance-executor");
    await f.host.callTool(child, "shell", { command: "make build" });
    f.host.interrupt(r, "user");
    await f.flush();
    // The same OpenCode 2 process, two hours later: no new instance, only the user's next prompt.
    f.clock.set(T0 + 2 * 3_600_000);
    await f.host.prompt(r);
    f.host.startExecution(r);
    await f.flush();
    const note = (await f.host.request(r)).messages.at(-1)!;
    expect(note.text).toContain("## Resumed Session (opencode-governance)");
    expect(note.text).toContain("governance-executor");
    expect(note.text).toContain("last tool call `shell`");
    expect(f.audit().filter((e) => e.type === "session_resumed" && e.sessionId === r)).toHaveLength(1);
    // Idle past 48 h in the same process: the next prompt starts fresh, with no resume context.
    f.host.succeed(r);
    await f.flush();
    f.clock.set(T0 + 51 * 3_600_000);
    await f.host.prompt(r);
    f.host.startExecution(r);
    await f.flush();
    expect((await f.host.request(r)).messages.at(-1)?.text ?? "").not.toContain("## Resumed Session");
    expect(f.audit().some((e) => e.type === "session_expired" && e.sessionId === r)).toBe(true);
  });
});

describe("the prompt cache on OpenCode 2 (issue 16, decisions/0011)", () => {
  test("the system prompt is byte-identical between the steps of a session while the status note after the last message moves", async () => {
    const r = await f.root();
    const first = await f.host.request(r);
    await f.host.callTool(r, "shell", { command: "x" });
    f.host.compactionEnded(r, "auto");
    await f.flush();
    const second = await f.host.request(r);
    expect(second.system).toEqual(first.system);
    expect(first.messages).toHaveLength(1);
    expect(second.messages.at(-1)?.text).toContain("## Post-Compaction Context Recovery (opencode-governance)");
  });
});
