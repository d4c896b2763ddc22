import type { PluginInput } from "@opencode-ai/plugin";
import { DEFAULT_CONFIG } from "../../governance/config/config.ts";
import { ensureGovernanceDir } from "../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import { SessionStore } from "../../governance/storage/session-store.ts";
import { type Clock, systemClock } from "../../governance/time/clock.ts";
import { AuditSink } from "./audit-sink.ts";
import { CallNotes } from "../sessions/call-notes.ts";
import { ConfigWatcher } from "./config-watcher.ts";
import { PluginContext } from "./context.ts";
import { DirectiveInbox } from "../stop/directive-inbox.ts";
import { EffectRunner } from "./effect-runner.ts";
import { IdleWatch } from "../sessions/idle-watch.ts";
import { createOpencodeApi, type OpencodeApi } from "../host/opencode-api.ts";
import { SessionRuntime } from "../sessions/session-runtime.ts";
import { SessionTracker } from "../sessions/session-tracker.ts";
import { StopController } from "../stop/stop-controller.ts";
import { systemTimers, type Timers } from "./timers.ts";

/** The host this instance runs in (plugin/host/host-lines.ts), recorded with `plugin_started` for `doctor`. */
export type HostInfo = { line: 1 | 2; version: string | null };
export type RuntimeOptions = { clock?: Clock; timers?: Timers; api?: OpencodeApi; host?: HostInfo };

/**
 * One plugin instance (never module globals: one `opencode serve` may host several projects), wired once: the
 * read-only context, the session runtime (the only writer of records), the effect runner, the tracker of hosted
 * sessions, the stop controller. Hooks receive this; none of its parts is reassigned after construction.
 */
export class Runtime {
  readonly ctx: PluginContext;
  readonly runner: EffectRunner;
  readonly tracker: SessionTracker;
  readonly stops: StopController;
  readonly calls = new CallNotes();

  readonly host: HostInfo;

  /** `client` is OpenCode 1's SDK client; an OpenCode 2 instance passes its own `api` instead. */
  constructor(input: { directory: string; client?: PluginInput["client"] }, options: RuntimeOptions = {}) {
    this.host = options.host ?? { line: 1, version: null };
    const clock = options.clock ?? systemClock;
    const timers = options.timers ?? systemTimers;
    let sink: AuditSink | undefined;
    const store = new SessionStore({ projectDir: input.directory, clock, onProblem: (p) => sink?.problem(p) });
    if (!options.api && !input.client) throw new Error("Runtime needs OpenCode 1's client or an OpencodeApi");
    const api = options.api ?? createOpencodeApi(input.client as PluginInput["client"], input.directory);
    const toast = (p: StoreProblem) => {
      if (p.kind === "io_error") void api.toast(`Governance cannot use ${p.file}: ${p.reason}`.slice(0, 300), "warning").catch(() => undefined);
    };
    sink = new AuditSink(store.paths, clock, DEFAULT_CONFIG.audit.maxBytes, toast);
    const config = new ConfigWatcher(store.paths.configFile, sink, timers);
    this.ctx = new PluginContext(input.directory, clock, timers, store, api, sink, config);
    this.runner = new EffectRunner(this.ctx, new SessionRuntime(this.ctx), new IdleWatch(this.ctx), new DirectiveInbox(this.ctx.paths.queues));
    this.tracker = new SessionTracker(this.runner);
    this.stops = new StopController(this.runner, this.tracker);
  }

  get sessions(): SessionRuntime {
    return this.runner.sessions;
  }

  /** Creates the git-ignored state folder, then config (created with defaults if missing), then sweeps and watches. */
  async start(): Promise<void> {
    const began = performance.now();
    const { ctx } = this;
    await ensureGovernanceDir(ctx.paths);
    await ctx.configWatcher.reload();
    const startupMs = Math.round(performance.now() - began);
    await ctx.record("plugin_started", { directory: ctx.directory, pid: process.pid, startupMs, host: this.host.line, hostVersion: this.host.version });
    ctx.configWatcher.watch();
    this.stops.start();
    // The sweep reads and parses every record (10 000 records: 2-6 s) and OpenCode waits for start() before the
    // project's first session, so it runs behind (docs/performance.md). Safe: a session's first activity checks its
    // own record, and the sweep re-checks staleness under the record's lock before moving it. flush() waits for it.
    this.#sweep = ctx.store.archiveStale(ctx.config.resume.maxIdle).then(
      () => undefined,
      (error: unknown) => ctx.reportHookError("start-sweep", error),
    );
  }

  #sweep: Promise<void> = Promise.resolve();

  /** OpenCode's `dispose`: timers stop, pending soft events are written, audit lines in flight are awaited. */
  async dispose(): Promise<void> {
    this.stops.dispose();
    this.ctx.configWatcher.stop();
    await this.flush();
  }

  async flush(): Promise<void> {
    await this.#sweep;
    await this.sessions.flush();
    await this.ctx.sink.settle();
  }
}
