/**
 * What the OpenCode 2 contract tests share: a project folder (and another location's), the double loaded with the
 * plugin's own default export (with the test's clock), and the few steps every scenario takes (a root session running
 * a turn, a child spawned through `subagent`, the audit log and a session record as the user would read them).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createFakeClock } from "../../governance/time/clock.ts";
import plugin from "../../plugin/index.ts";
import { type SetupOptions, setupV2 } from "../../plugin/opencode-2/setup.ts";
import type { V2Context } from "../../plugin/opencode-2/types.ts";
import { createFakeTimers, T0 } from "../plugin/fixture.ts";
import { type DoubleOptions, OpenCode2Double } from "./opencode-2-double.ts";

export const PREFIX = "## Governance Context (opencode-governance)";

export type AuditLine = { type: string; sessionId?: string; [k: string]: unknown };

export class V2Fixture {
  dir = "";
  other = "";
  host = new OpenCode2Double();
  readonly clock = createFakeClock(T0);
  timers = createFakeTimers(this.clock);
  /** Extra adapter options (test-only switches) for the instances loaded from now on. */
  setup: Omit<SetupOptions, "clock" | "timers"> = {};

  /** The plugin as OpenCode 2 loads it, with the test's clock (the module's `setup` is this adapter). */
  readonly module = { default: { id: plugin.id, setup: (ctx: V2Context) => setupV2(ctx, { clock: this.clock, timers: this.timers, ...this.setup }) } };

  /** A fresh double with `options`, the plugin loaded for this project and for another location. */
  async start(options: DoubleOptions = {}, setup: Omit<SetupOptions, "clock" | "timers"> = {}): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-"));
    this.other = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-other-"));
    this.clock.set(T0);
    this.timers = createFakeTimers(this.clock);
    this.setup = setup;
    this.host = new OpenCode2Double(options);
    this.host.config.experimental.subagent_depth = 4; // what `init` writes for OpenCode 2 (maxDepth + 1)
    await this.host.load(this.module, this.dir);
    await this.host.load(this.module, this.other);
  }

  async stop(): Promise<void> {
    await this.host.unload();
    fs.rmSync(this.dir, { recursive: true, force: true });
    fs.rmSync(this.other, { recursive: true, force: true });
  }

  record(id: string) {
    return JSON.parse(fs.readFileSync(path.join(this.dir, ".opencode", "governance", "sessions", `${id}.json`), "utf8"));
  }

  audit(dir = this.dir): AuditLine[] {
    const file = path.join(dir, ".opencode", "governance", "audit.log");
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as AuditLine);
  }

  async flush(): Promise<void> {
    await this.host.drain();
    await this.timers.advance(0);
  }

  /** A session running a turn at depth d under `parent`, with the subagent call left pending. */
  async spawn(parent: string, agent: string, background = false): Promise<{ id: string; call: Promise<{ status: string; text: string }> }> {
    const { host } = this;
    const before = host.spawned.length;
    const call = host.callTool(parent, "subagent", { agent, description: "work", prompt: "do it", ...(background ? { background } : {}) });
    let settled = false;
    void call.finally(() => (settled = true));
    for (let i = 0; i < 400 && host.spawned.length === before && !settled; i++) await new Promise((r) => setTimeout(r, 5));
    const id = host.spawned.at(-1);
    if (!id || host.spawned.length === before) throw new Error(`no child spawned: ${JSON.stringify(await Promise.race([call, Promise.resolve("pending")]))}`);
    await this.flush();
    return { id, call };
  }

  async root(agent = "governance-coordinator"): Promise<string> {
    const id = this.host.createSession({ directory: this.dir, agent });
    await this.host.prompt(id);
    this.host.startExecution(id);
    await this.flush();
    return id;
  }
}
