import { randomUUID } from "node:crypto";
import type { HostEvent } from "../runtime/host-event.ts";
import { signalsOf } from "./host-signals.ts";
import { readFileSync } from "node:fs";
import type { GovernanceConfig } from "../../governance/config/config.ts";
import { type TelemetryTargets, telemetrySwitch } from "../../governance/telemetry/telemetry-switch.ts";
import type { TelemetryBackend, TelemetryBackendOptions } from "./telemetry-backend.ts";

export type TelemetryDeps = {
  env: Readonly<Record<string, string | undefined>>;
  config: () => GovernanceConfig;
  now: () => number;
  /** Writes an audit line (telemetry_started, telemetry_export_failed, …). */
  record: (type: "telemetry_started" | "telemetry_stopped" | "telemetry_export_failed", data: Record<string, unknown>) => void;
  reportError: (where: string, error: unknown) => void;
  /** Spend against the caps over time, for the `governance.spend` gauge. */
  spend?: TelemetryBackendOptions["spend"];
  /** Loads the SDK chunk (injectable for tests). */
  load?: () => Promise<{ createOtelBackend: (t: TelemetryTargets, o: TelemetryBackendOptions) => TelemetryBackend }>;
};

/** Items kept while the SDK chunk loads (the plugin's first events); more are dropped. */
const MAX_PENDING = 1_000;
/** Longest a dispose waits for the last export. */
const SHUTDOWN_WAIT_MS = 2_000;

/**
 * The plugin's OpenTelemetry switch (issue 18, docs/observability.md). Always loaded and tiny: while telemetry is
 * off every method is one boolean check, and the SDK (plugin/telemetry/otel-backend.ts and @opentelemetry/*) is
 * never imported — scripts/build.ts keeps it in an on-demand chunk and fails the build if it reaches the start
 * path. Fed by the audit sink (every governance decision is an audit event), the `event` hook (turn boundaries,
 * model, tokens, tool parts) and the hook timer. Nothing here blocks or throws into a hook.
 */
export class Telemetry {
  readonly #deps: TelemetryDeps;
  #backend: TelemetryBackend | undefined;
  #pending: ((b: TelemetryBackend) => void)[] = [];
  #key = "off";
  #chain: Promise<void> = Promise.resolve();
  /** True while export is on or its SDK is loading. */
  active = false;

  constructor(deps: TelemetryDeps) {
    this.#deps = deps;
  }

  /** Applies the switch to the current config and environment; idempotent, serialized. */
  configure(): Promise<void> {
    this.#chain = this.#chain.then(() => this.#apply()).catch((e: unknown) => this.#deps.reportError("telemetry", e));
    return this.#chain;
  }

  async #apply(): Promise<void> {
    const t = this.#deps.config().telemetry;
    const sw = telemetrySwitch(t, this.#deps.env);
    const key = sw.on ? JSON.stringify([sw, t.toolSpans, t.includeText, t.exportTimeout]) : "off";
    if (key === this.#key) return;
    const wasOn = this.#key !== "off";
    this.#key = key;
    await this.#stop();
    if (!sw.on) {
      if (wasOn) this.#deps.record("telemetry_stopped", { reason: sw.reason });
      return;
    }
    this.active = true;
    const { on: _on, ...targets } = sw;
    const load = this.#deps.load ?? (() => import("./otel-backend.ts"));
    const { createOtelBackend } = await load();
    if (this.#key !== key) return;
    const backend = createOtelBackend(targets, {
      env: this.#deps.env,
      exportTimeoutMs: t.exportTimeout,
      toolSpans: t.toolSpans,
      includeText: t.includeText,
      roleOf: (agent) => agentRoleOf(this.#deps.config(), agent),
      now: this.#deps.now,
      version: packageVersion(),
      instanceId: randomUUID(),
      report: (signal, reason) => this.#deps.record("telemetry_export_failed", { signal, reason: reason.slice(0, 200), dropped: true }),
      ...(this.#deps.spend ? { spend: this.#deps.spend } : {}),
    });
    this.#backend = backend;
    const pending = this.#pending;
    this.#pending = [];
    for (const fn of pending) fn(backend);
    // Header NAMES only: their values are credentials and the audit log is read by every CLI command.
    const { headers, ...where } = targets;
    this.#deps.record("telemetry_started", { ...where, headers: Object.keys(headers), exportTimeoutMs: t.exportTimeout, toolSpans: t.toolSpans });
  }

  async #stop(): Promise<void> {
    const backend = this.#backend;
    this.#backend = undefined;
    this.active = false;
    this.#pending = [];
    if (backend) await bounded(backend.shutdown());
  }

  #send(fn: (b: TelemetryBackend) => void): void {
    try {
      if (this.#backend) fn(this.#backend);
      else if (this.#pending.length < MAX_PENDING) this.#pending.push(fn);
    } catch (error) {
      this.#deps.reportError("telemetry", error);
    }
  }

  /** An audit event (from the audit sink's tap). */
  audit(type: string, data: Record<string, unknown>): void {
    if (type === "config_loaded" || type === "config_problem" || type === "policy_ceiling") void this.configure();
    if (this.active) this.#send((b) => b.audit(type, data));
  }

  /** One host event's meaning (its adapter's one parse), before (`start`) and after (`done`) governance handled it. */
  events(events: readonly HostEvent[], phase: "start" | "done"): void {
    if (!this.active) return;
    const signals = signalsOf(events);
    if (signals.length > 0) this.#send((b) => b.event(signals, phase));
  }

  /** Wraps a hook so its duration lands in `governance.hook.duration` while export is on. */
  timed<A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
    return (...args: A) => {
      if (!this.#backend) return fn(...args);
      const began = performance.now();
      return fn(...args).finally(() => this.#backend?.hook(hook, performance.now() - began));
    };
  }

  /** Exports what is queued now (tests, dispose). */
  async flush(): Promise<void> {
    await this.#chain;
    if (this.#backend) await bounded(this.#backend.flush());
  }

  dispose(): Promise<void> {
    this.#key = "off";
    this.#chain = this.#chain.then(() => this.#stop()).catch((e: unknown) => this.#deps.reportError("telemetry", e));
    return this.#chain;
  }
}

function bounded(p: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
    timer.unref?.();
    p.catch(() => undefined).finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function agentRoleOf(config: GovernanceConfig, agent: string | undefined): string {
  if (!agent) return "unknown";
  return (Object.hasOwn(config.agents, agent) ? config.agents[agent]?.role : undefined) ?? config.defaultRole.role;
}

/** This package's version (dist/plugin/ and plugin/telemetry/ both sit two levels below package.json). */
function packageVersion(): string {
  try {
    return String(JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version ?? "unknown");
  } catch {
    return "unknown";
  }
}
