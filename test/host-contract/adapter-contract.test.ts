/**
 * One contract suite, run on every host adapter (unstorage's `testDriver` pattern; Conventions 19): what ANY adapter
 * listed in plugin/adapters.ts must do, asserted once in host-neutral terms. Each host is driven through its own
 * entry — OpenCode 1 through the `Hooks` its setup returns (the fixtures of test/plugin/), OpenCode 2 through the
 * contract double (test/host-contract/opencode-2-double.ts) — by a small driver below that only translates.
 * No real binary: seconds.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { HostLine } from "../../governance/host/host-lines.ts";
import type { HostAdapter } from "../../plugin/wiring/host-adapter.ts";
import type { SetupOptions } from "../../plugin/opencode-2/setup.ts";
import type { V2Context, V2Event, V2Hook } from "../../plugin/opencode-2/types.ts";
import { createFakeClock } from "../../governance/time/clock.ts";
import { Telemetry } from "../../plugin/telemetry/telemetry.ts";
import { ADAPTERS } from "../../plugin/adapters.ts";
import { HOOK_JOBS } from "../../plugin/wiring/host-adapter.ts";
import { createFakeTimers, events as v1Events, T0 } from "../plugin/fixture.ts";
import { PREFIX, V2Fixture } from "./v2-fixture.ts";
import { replayEvent } from "./v2-captures.ts";

/** OpenCode 1's shapes, as its adapter's entry types them (only plugin/ imports the host's package). */
type PluginInput = Parameters<(typeof ADAPTERS)[1]["setup"]>[0];
type Hooks = Awaited<ReturnType<(typeof ADAPTERS)[1]["setup"]>>;

type AuditLine = { type: string; sessionId?: string; [k: string]: unknown };

/** What the suite asks of a host, in the plugin's terms; each driver translates to its host's calls and shapes. */
type Driver = {
  readonly line: HostLine;
  /** Whether this host has a shell hook the adapter wires (the OpenCode 2 double does not model `ctx.shell`). */
  readonly shellHook: boolean;
  /** Loads the adapter on a fresh project whose governance.yaml is `config`. */
  start(config?: string): Promise<void>;
  /** The host ends the instance (OpenCode 1's `dispose`, OpenCode 2's cleanup): what governance holds is on disk. */
  end(): Promise<void>;
  /** Ends it (again) and removes the project. */
  stop(): Promise<void>;
  /** A `session.created` of the host, raw, as its adapter's `parseEvents` reads it. */
  rawCreated(id: string, parentId: string, agent: string): unknown;
  /** A root session of `agent` that took a prompt; answers its id. */
  root(agent: string): Promise<string>;
  /** A subagent of `agent` under `parent`, created the host's way (OpenCode 2: through its `subagent` tool). */
  child(parent: string, agent: string): Promise<string>;
  /** One model step of the session's agent loop: the system text the model would read. */
  step(id: string): Promise<string>;
  /** The session's model asks the delegation tool for `agent`: the refusal the model reads, and whether a child exists. */
  spawn(id: string, agent: string): Promise<{ refusal: string | undefined; childCreated: boolean }>;
  /** The session's model runs `echo hi` in the host's shell tool (before and after hooks). */
  shell(id: string): Promise<void>;
  /** Whether the host offers the session's agent the governance tool. */
  governanceToolOffered(id: string): Promise<boolean>;
  audit(): Promise<AuditLine[]>;
  /** The session's record as written on disk (after `end`). */
  record(id: string): { counters: { toolCalls: number }; lastToolCall: { tool: string } | null; depth: number };
};

const DELEGATING = "governance-coordinator";
const SUBAGENT = "governance-executor";

function readAudit(dir: string): AuditLine[] {
  const file = path.join(dir, ".opencode", "governance", "audit.log");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as AuditLine);
}
const readRecord = (dir: string, id: string) => JSON.parse(fs.readFileSync(path.join(dir, ".opencode", "governance", "sessions", `${id}.json`), "utf8"));
const writeConfig = (dir: string, config: string | undefined) => {
  if (config === undefined) return;
  fs.mkdirSync(path.join(dir, ".opencode"), { recursive: true });
  fs.writeFileSync(path.join(dir, ".opencode", "governance.yaml"), config);
};

/** OpenCode 1: the `Hooks` of its adapter's setup, called as OpenCode 1.18 calls them. */
function opencode1(): Driver {
  let dir = "";
  let hooks: Hooks;
  let call = 0;
  const agents = new Map<string, string>();
  // OpenCode's agent config as its `config` hook hands it over: modes decide who is a subagent.
  const config: { agent: Record<string, { mode: string; permission?: Record<string, unknown> }> } = { agent: {} };
  const client = {
    session: { abort: async () => ({}), status: async () => ({ data: {} }), get: async () => ({ data: undefined }) },
    tui: { showToast: async () => ({}) },
  };
  const h = <K extends keyof Hooks>(name: K) => hooks[name] as unknown as (...args: unknown[]) => Promise<void>;
  const created = async (id: string, info: { parentID?: string; agent: string }) => {
    agents.set(id, info.agent);
    await h("event")({ event: v1Events.created(id, info) });
  };
  return {
    line: 1,
    shellHook: true,
    async start(governanceYaml) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-contract-1-"));
      writeConfig(dir, governanceYaml);
      const clock = createFakeClock(T0);
      hooks = await ADAPTERS[1].setup({ directory: dir, client } as unknown as PluginInput, { clock, timers: createFakeTimers(clock) });
      config.agent = { [DELEGATING]: { mode: "primary" }, [SUBAGENT]: { mode: "subagent" }, "governance-builder": { mode: "subagent" } };
      await h("config")(config);
    },
    end: async () => hooks.dispose?.(),
    async stop() {
      await hooks.dispose?.();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    rawCreated: (id, parentId, agent) => v1Events.created(id, { parentID: parentId, agent }),
    async root(agent) {
      const id = `ses_c1root${String(++call).padStart(18, "0")}`;
      await created(id, { agent });
      await h("chat.message")({ sessionID: id, agent }, { message: {}, parts: [] });
      return id;
    },
    async child(parent, agent) {
      const id = `ses_c1child${String(++call).padStart(17, "0")}`;
      await h("tool.execute.before")(
        { tool: "task", sessionID: parent, callID: `call_${++call}` },
        { args: { subagent_type: agent, description: "d", prompt: "p" } },
      );
      await created(id, { parentID: parent, agent });
      await h("chat.message")({ sessionID: id, agent }, { message: {}, parts: [] });
      return id;
    },
    async step(id) {
      const out = { system: ["You are OpenCode."] };
      await h("experimental.chat.system.transform")({ sessionID: id, model: {} }, out);
      return out.system.join("\n");
    },
    async spawn(id, agent) {
      try {
        await h("tool.execute.before")(
          { tool: "task", sessionID: id, callID: `call_${++call}` },
          { args: { subagent_type: agent, description: "d", prompt: "p" } },
        );
        return { refusal: undefined, childCreated: true }; // OpenCode 1 creates the child once the hook let the call through
      } catch (error) {
        return { refusal: error instanceof Error ? error.message : String(error), childCreated: false };
      }
    },
    async shell(id) {
      const callID = `call_${++call}`;
      const args = { command: "echo hi", description: "d" };
      await h("tool.execute.before")({ tool: "bash", sessionID: id, callID }, { args });
      await h("tool.execute.after")({ tool: "bash", sessionID: id, callID, args }, { title: "", output: "hi", metadata: {} });
    },
    async governanceToolOffered(id) {
      const entry = config.agent[agents.get(id) ?? ""];
      return entry?.permission?.governance !== "deny";
    },
    audit: async () => readAudit(dir),
    record: (id) => readRecord(dir, id),
  };
}

/** OpenCode 2: the contract double, which replays 2.0.15's captured payloads, with the adapter loaded per location. */
function opencode2(): Driver {
  const f = new V2Fixture();
  return {
    line: 2,
    shellHook: false,
    async start(governanceYaml) {
      await f.start();
      if (governanceYaml === undefined) return;
      // The config is read at start: the instance is loaded again over it.
      await f.host.unload();
      writeConfig(f.dir, governanceYaml);
      await f.host.load(f.module, f.dir);
    },
    end: () => f.host.unload(),
    stop: () => f.stop(),
    rawCreated: (id, parentId, agent) => replayEvent("session.created", id, { parentID: parentId, agent, title: agent }, f.dir, "child"),
    root: (agent) => f.root(agent),
    child: async (parent, agent) => (await f.spawn(parent, agent)).id,
    step: async (id) => (await f.host.request(id)).system.join("\n"),
    async spawn(id, agent) {
      const before = f.host.spawned.length;
      const r = await f.host.callTool(id, "subagent", { agent, description: "d", prompt: "p" });
      return { refusal: r.status === "error" ? r.text : undefined, childCreated: f.host.spawned.length > before };
    },
    async shell(id) {
      await f.host.callTool(id, "shell", { command: "echo hi" }, () => ({ content: "hi" }));
    },
    governanceToolOffered: async (id) => (await f.host.request(id)).tools.includes("governance"),
    async audit() {
      await f.flush();
      return f.audit();
    },
    record: (id) => f.record(id),
  };
}

const DRIVERS: Record<HostLine, () => Driver> = { 1: opencode1, 2: opencode2 };

/** Every hook the wiring wraps, by job (`governance.hook.duration`'s name), and how often each job ran. */
function spyOnWiring() {
  const wrapped: { job: string; fn: (...args: unknown[]) => Promise<void> }[] = [];
  const calls = new Map<string, number>();
  const original = Telemetry.prototype.timed;
  vi.spyOn(Telemetry.prototype, "timed").mockImplementation(function (this: Telemetry, job, fn) {
    const timed = original.call(this, job, fn);
    const counted = (...args: unknown[]) => {
      calls.set(job, (calls.get(job) ?? 0) + 1);
      return timed(...(args as Parameters<typeof timed>));
    };
    wrapped.push({ job, fn: counted as (...args: unknown[]) => Promise<void> });
    return counted as typeof timed;
  });
  return { wrapped, calls, jobs: () => [...new Set(wrapped.map((w) => w.job))].sort() };
}

describe.each(Object.values(ADAPTERS).map((adapter) => ({ adapter, name: `OpenCode ${adapter.line}` })))("host adapter contract: $name", ({ adapter }) => {
  let host: Driver;
  let wiring: ReturnType<typeof spyOnWiring>;
  let savedXdg: string | undefined;
  const userConfig = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-contract-user-"));

  beforeEach(() => {
    // The user's own governance config is the test's (empty), never the machine's.
    savedXdg = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = userConfig;
    wiring = spyOnWiring();
    host = DRIVERS[adapter.line]();
  });
  afterEach(async () => {
    await host.stop();
    vi.restoreAllMocks();
    if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = savedXdg;
  });

  test("its events parse to the plugin's shapes", async () => {
    await host.start();
    const [created] = adapter.parseEvents(host.rawCreated("ses_contractchild0000000000", "ses_contractparent000000000", SUBAGENT) as never);
    expect(created).toMatchObject({ type: "created", sessionId: "ses_contractchild0000000000", parentId: "ses_contractparent000000000" });
  });

  test("every job is wired and timed under the same name on every host (governance.hook.duration)", async () => {
    await host.start();
    expect(wiring.jobs()).toEqual([...HOOK_JOBS].filter((j) => j !== "shell" || host.shellHook).sort());
    // The job table names every job (the type requires it); the hooks of a job are told apart only by the host's names.
    expect(Object.keys(adapter.jobs).sort()).toEqual([...HOOK_JOBS].sort());
  });

  test("a root session's model step carries the governance prefix", async () => {
    await host.start();
    const root = await host.root(DELEGATING);
    expect(await host.step(root)).toContain(PREFIX);
    expect(wiring.calls.get("model.step")).toBeGreaterThanOrEqual(1);
  });

  test("a spawn past the depth limit is refused before a child exists", async () => {
    await host.start("delegation:\n  maxDepth: 1\n");
    const root = await host.root(DELEGATING);
    const child = await host.child(root, SUBAGENT);
    const spawn = await host.spawn(child, "governance-builder");
    expect(spawn.refusal).toContain("EMERGENCY_HALT");
    expect(spawn.childCreated).toBe(false);
    expect((await host.audit()).find((e) => e.type === "emergency_halt")).toMatchObject({ sessionId: child, targetAgent: "governance-builder" });
  });

  test("a shell call is gated, recorded in the core's names and its hooks timed", async () => {
    await host.start();
    const root = await host.root(DELEGATING);
    const before = wiring.calls.get("tool.execute.before") ?? 0;
    await host.shell(root);
    expect(wiring.calls.get("tool.execute.before")).toBe(before + 1);
    expect(wiring.calls.get("tool.execute.after")).toBeGreaterThanOrEqual(1);
    await host.end();
    const record = host.record(root);
    expect(record.lastToolCall?.tool).toBe("bash");
    expect(record.counters.toolCalls).toBe(1);
  });

  test("the governance tool is offered to a root's agent and hidden from a subagent (mayUseGovernanceTool)", async () => {
    await host.start();
    const root = await host.root(DELEGATING);
    const child = await host.child(root, SUBAGENT);
    expect(await host.governanceToolOffered(root)).toBe(true);
    expect(await host.governanceToolOffered(child)).toBe(false);
  });

  test("every hook is contained: a handler that throws does not reach the host, it is audited", async () => {
    await host.start();
    expect(wiring.wrapped.length).toBeGreaterThan(0);
    // Called with nothing: every handler fails on its input; none of the failures reaches the host.
    for (const { job, fn } of wiring.wrapped) await expect(fn(), job).resolves.toBeUndefined();
    await host.end();
    const errors = (await host.audit()).filter((e) => e.type === "hook_error");
    expect(errors.length).toBeGreaterThan(0);
    // Named as the host names the hook, without OpenCode 1's `experimental.` (the names the audit always had).
    for (const e of errors) expect(String(e.hook)).not.toMatch(/^experimental\./);
  });
});

describe("the contract is a type", () => {
  test("an adapter missing a member does not compile (npm run typecheck checks the expectation below)", () => {
    const { parseEvents: _dropped, ...missing } = ADAPTERS[1];
    // @ts-expect-error -- `parseEvents` is missing: the compiler rejects the adapter.
    const broken: HostAdapter<PluginInput, Hooks, unknown, keyof Hooks> = missing;
    const { jobs, ...rest } = ADAPTERS[2];
    const { shell: _shell, ...fewerJobs } = jobs;
    // @ts-expect-error -- the `shell` job is missing from the job table: every job on every host.
    const noShell: HostAdapter<V2Context, (end?: { handover?: boolean }) => Promise<void>, V2Event, V2Hook, SetupOptions> = { ...rest, jobs: fewerJobs };
    expect(broken).not.toHaveProperty("parseEvents");
    expect(noShell.jobs).not.toHaveProperty("shell");
  });
});
