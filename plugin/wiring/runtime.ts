import { DEFAULT_CONFIG } from "../../governance/config/config.ts";
import { ensureGovernanceDir } from "../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { type Clock, systemClock } from "../../governance/time/clock.ts";
import { AuditSink } from "../runtime/audit-sink.ts";
import { CallNotes } from "../sessions/call-notes.ts";
import { ResumeOffer } from "../sessions/resume-offer.ts";
import { ConfigWatcher } from "../runtime/config-watcher.ts";
import { PluginContext } from "../runtime/context.ts";
import { EffectRunner } from "../sessions/effect-runner.ts";
import { effectHandlers } from "./effect-handlers.ts";
import { IdleWatch } from "../sessions/idle-watch.ts";
import type { HostApi } from "../runtime/host-api.ts";
import { ResumeNotes } from "../sessions/resume-notes.ts";
import { SessionRuntime } from "../sessions/session-runtime.ts";
import { SessionTracker } from "../sessions/session-tracker.ts";
import { StopController } from "../stop/stop-controller.ts";
import { Maintenance } from "../sessions/maintenance.ts";
import { releaseHosted } from "../stop/exit-release.ts";
import { forgetEnded } from "../sessions/forget-ended.ts";
import type { SessionHost } from "../../governance/session/session-record.ts";
import type { HostLine } from "../../governance/host/host-lines.ts";
import { onProcessExit } from "../runtime/exit-guard.ts";
import { InFlight } from "../runtime/in-flight.ts";
import { BudgetGuard } from "../budget/budget-guard.ts";
import { applyBudgetRaise } from "../budget/budget-raises.ts";
import { systemTimers, type Timers } from "../runtime/timers.ts";
import { Telemetry, type TelemetryDeps } from "../telemetry/telemetry.ts";
import { CoverageWatch } from "../sessions/coverage-watch.ts";
import { tapUserHooks } from "../runtime/user-hooks.ts";

/** The host this instance runs in (governance/host/host-lines.ts), recorded with `plugin_started` for `doctor`. */
export type HostInfo = { line: HostLine; version: string | null };
/** `env` is what the telemetry switch reads (default `process.env`); `loadTelemetry` replaces the SDK chunk in tests. */
export type RuntimeOptions = {
  clock?: Clock;
  timers?: Timers;
  /** The port to the host (plugin/runtime/host-api.ts), built by the adapter: plugin/opencode-1/ or plugin/opencode-2/. */
  api: HostApi;
  host?: HostInfo;
  env?: TelemetryDeps["env"];
  loadTelemetry?: TelemetryDeps["load"];
  /** Who this process is as a session host and how to tell a dead one (the model-based test plays several processes). */
  processes?: { self: SessionHost; isGone: (host: SessionHost) => Promise<boolean>; signals?: boolean };
  argv?: readonly string[]; // OpenCode's command line (default: this process's): the session this start resumes
};

/** How long an exit waits for hook calls under way before writing what it has (a hung hook cannot hold it longer). */
export const EXIT_SETTLE_MS = 1_500;

/**
 * One plugin instance (never module globals: one `opencode serve` may host several projects), wired once: the context,
 * the session runtime (the only writer of records), the effect runner, the tracker of hosted sessions, the stop
 * controller. The adapters hand it to the hooks, each declaring the narrow shape it uses; no part is ever reassigned.
 */
export class Runtime {
  readonly ctx: PluginContext;
  readonly runner: EffectRunner;
  readonly tracker: SessionTracker;
  readonly stops: StopController;
  readonly budget: BudgetGuard;
  readonly calls = new CallNotes();
  /** The periodic sweep: archive, crash recovery, orphan checks, leftovers, forgetting (plugin/sessions/maintenance.ts). */
  readonly maintenance: Maintenance;
  /** Hook calls under way: an exit waits for them (plugin/index.ts wraps every hook). */
  readonly inFlight = new InFlight();
  #unregisterExit: (() => void) | undefined;
  readonly #signals: boolean; // process-wide signal handlers (off when a test plays several processes in one)
  readonly resumeNotes = new ResumeNotes();
  /** OpenTelemetry export: off (and its SDK unloaded) unless the switch says so. */
  readonly telemetry: Telemetry;
  readonly host: HostInfo;
  readonly coverage: CoverageWatch;
  readonly resumeOffer: ResumeOffer; // the one resume toast of this process (plugin/sessions/resume-offer.ts)

  /** Host-neutral: each adapter hands in its own `api` (the host's SDK behind the port). */
  constructor(input: { directory: string }, options: RuntimeOptions) {
    this.host = options.host ?? { line: 1, version: null };
    const clock = options.clock ?? systemClock;
    const timers = options.timers ?? systemTimers;
    let sink: AuditSink | undefined;
    const store = new SessionStore({ projectDir: input.directory, clock, onProblem: (p) => sink?.problem(p) });
    const warn = (message: string) => void options.api.toast(message.slice(0, 300), "warning").catch(() => undefined);
    const storeProblem = (p: StoreProblem) => p.kind === "io_error" && warn(`Governance cannot use ${p.file}: ${p.reason}`);
    sink = new AuditSink(store.paths, clock, DEFAULT_CONFIG.audit.maxBytes, storeProblem);
    const config = Object.assign(new ConfigWatcher(store.paths.configFile, sink, timers), { notify: warn });
    this.ctx = new PluginContext(input.directory, clock, timers, store, options.api, sink, config);
    this.runner = new EffectRunner(this.ctx, new SessionRuntime(this.ctx), new IdleWatch(this.ctx));
    this.tracker = options.processes ? new SessionTracker(this.runner, options.processes.self, options.processes.isGone) : new SessionTracker(this.runner);
    this.runner.sessions.busyHere = (id) => this.tracker.isBusy(id);
    this.#signals = options.processes?.signals ?? true;
    this.stops = new StopController(this.runner, this.tracker);
    this.runner.handle(effectHandlers(this.runner, this.stops.inbox));
    this.budget = new BudgetGuard(this.runner, this.stops, this.tracker);
    this.stops.onBudgetRaise = (id, d) => applyBudgetRaise(this.runner, this.tracker, id, d);
    this.maintenance = new Maintenance(this.runner, this.tracker, {
      forget: (records) => forgetEnded(this, records),
      forgetOne: (id) => this.forget(id),
      stats: () => this.stats(),
      onEnded: (id) => this.stops.onEnded(id),
      ...(options.processes ? { isGone: options.processes.isGone } : {}),
    });
    const ctx = this.ctx;
    this.telemetry = new Telemetry({
      env: options.env ?? process.env,
      config: () => ctx.config,
      now: () => clock.now(),
      record: (type, data) => void ctx.record(type, data),
      reportError: (where, error) => ctx.reportHookError(where, error),
      spend: () => this.budget.spend.gaugeRows(),
      ...(options.loadTelemetry ? { load: options.loadTelemetry } : {}),
    });
    this.coverage = new CoverageWatch(this.ctx, () => this.host);
    this.resumeOffer = new ResumeOffer(this.ctx, this.inFlight, options.argv);
    sink.tap((type, data) => this.telemetry.audit(type, data));
    tapUserHooks(this.ctx); // the user's own hooks on audit events, never awaited (docs/hooks.md); bounded by the config
  }

  /** Drops every in-memory trace of one session (the files stay the truth). */
  forget(sessionId: string): void {
    this.tracker.forget(sessionId);
    this.resumeNotes.forget(sessionId);
    this.stops.forget(sessionId);
    this.budget.onEnded(sessionId);
    this.stops.inbox.forget(sessionId);
    this.runner.idle.forget(sessionId);
    this.ctx.store.forget(sessionId);
    this.runner.sessions.forget(sessionId);
    this.coverage.forget(sessionId);
  }

  /** What this instance holds in memory, per map: the soak test asserts none grows with ended sessions. */
  stats(): Record<string, number> {
    return {
      ...this.tracker.sizes(),
      ...this.sessions.sizes(),
      ...this.stops.sizes(),
      ...this.budget.sizes(),
      inbox: this.stops.inbox.size(),
      idleWaiters: this.runner.idle.size(),
      storeCache: this.ctx.store.cacheSize(),
      callNotes: this.calls.size(),
      inFlight: this.inFlight.size,
    };
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
    // Not awaited: with export on, the SDK chunk loads behind; what happens meanwhile is queued (bounded).
    void this.telemetry.configure();
    const startupMs = Math.round(performance.now() - began);
    await ctx.record("plugin_started", { directory: ctx.directory, pid: process.pid, startupMs, host: this.host.line, hostVersion: this.host.version });
    ctx.configWatcher.watch();
    this.stops.start();
    if (this.#signals) this.#unregisterExit = onProcessExit(() => this.#finish());
    this.maintenance.start(); // behind: 2-6 s for 10 000 records, and OpenCode waits for start() (docs/performance.md)
  }

  /**
   * OpenCode's `dispose` (the end of every `opencode run`, a TUI quit, an instance unloaded): timers stop, hook calls
   * under way are awaited (bounded), pending writes and audit lines land: the final state is on disk, no lock left. Idempotent.
   */
  async dispose(end: { handover?: boolean } = {}): Promise<void> {
    this.#unregisterExit?.();
    this.#unregisterExit = undefined;
    await this.#finish(end);
  }

  /**
   * The end of this instance (dispose or a signal): all written, every hosted session released (exit-release.ts) —
   * unless a new instance in this same process takes them over (`handover`: OpenCode 2's reload), whose turns go on.
   */
  async #finish(end: { handover?: boolean } = {}): Promise<void> {
    this.#stopWork();
    await this.inFlight.settle(EXIT_SETTLE_MS);
    if (!end.handover)
      await releaseHosted(this.runner, this.tracker, this.stops.inbox).catch((error: unknown) => this.ctx.reportHookError("exit-release", error));
    await this.flush();
    await this.telemetry.dispose();
  }

  /** A kill, for crash tests: timers and watchers stop, nothing more is written. */
  halt(): void {
    this.#stopWork();
    this.#unregisterExit?.();
  }

  #stopWork(): void {
    this.maintenance.stop();
    this.stops.dispose();
    this.ctx.configWatcher.stop();
  }

  async flush(): Promise<void> {
    await this.maintenance.settled();
    await Promise.all([this.sessions.flush(), this.coverage.saveSummary()]);
    await this.ctx.sink.settle();
  }
}
