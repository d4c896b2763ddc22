import type { TelemetryConfig } from "../config/config.ts";

/** Where each signal goes, and why export is on. */
export type TelemetryTargets = {
  traces: string;
  metrics: string;
  logs: string;
  /** `env`: an `OTEL_EXPORTER_OTLP_*` variable; `config`: the user's or the organisation's `telemetry.endpoint`, or `enabled: true`. */
  source: "env" | "config";
  /** Headers from the config layer that chose the endpoint (or the user's own, with the environment's endpoint). */
  headers: Record<string, string>;
  /**
   * Per signal, whether `OTEL_EXPORTER_OTLP_*HEADERS` go too: only to an endpoint the environment itself named (its
   * general or that signal's own variable). An endpoint from a config file gets that file's headers alone, and the
   * default endpoint (`localhost:4318`, a signal nobody named) gets none: whatever listens there was not chosen by the
   * holder of those credentials (issue 27 §3, issue 41 §5).
   */
  envHeaders: Record<Signal, boolean>;
};

export type Signal = (typeof SIGNALS)[number];

export type TelemetrySwitch = ({ on: true } & TelemetryTargets) | { on: false; reason: string };

/** The OTLP/HTTP default of every OpenTelemetry SDK (and of OpenCode's exporter). */
export const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318";

type Env = Readonly<Record<string, string | undefined>>;

const SIGNALS = ["traces", "metrics", "logs"] as const;
const NONE: Record<Signal, boolean> = { traces: false, metrics: false, logs: false };

function trimmed(value: string | undefined): string {
  return (value ?? "").trim();
}

/** `${base}/v1/<signal>`, as the OTLP exporter specification builds a signal URL from the general endpoint. */
function signalUrl(base: string, signal: Signal): string {
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/**
 * The one switch (issue 18): off by default; on when OpenCode's own export would be on (`OTEL_EXPORTER_OTLP_ENDPOINT`
 * or a signal-specific `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT`), or when the config says so.
 * `enabled: false` and `OTEL_SDK_DISABLED=true` win over everything. A signal-specific variable is used as is (the
 * specification's rule); a base endpoint gets `/v1/<signal>` appended. A config endpoint (the user's own file or the
 * organisation's policy; a project's is refused before it gets here) wins over every variable, and carries only its
 * own file's headers. A signal no variable names falls back to the default endpoint without the environment's headers.
 */
export function telemetrySwitch(config: TelemetryConfig, env: Env): TelemetrySwitch {
  if (config.enabled === false) return { on: false, reason: "telemetry.enabled is false" };
  if (trimmed(env.OTEL_SDK_DISABLED).toLowerCase() === "true") return { on: false, reason: "OTEL_SDK_DISABLED=true" };
  const specific = {
    traces: trimmed(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT),
    metrics: trimmed(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT),
    logs: trimmed(env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT),
  };
  const fromEnv = trimmed(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const fromConfig = config.endpoint.trim();
  const anySpecific = SIGNALS.some((s) => specific[s] !== "");
  if (config.enabled === "auto" && !fromConfig && !fromEnv && !anySpecific) {
    return { on: false, reason: "no OTEL_EXPORTER_OTLP_ENDPOINT and no telemetry.endpoint" };
  }
  const headers = { ...config.headers };
  // An endpoint from a config file (the user's or the organisation's, never a project's: policy-merge.ts) takes every
  // signal, with that file's headers only.
  if (fromConfig) {
    const url = (s: Signal) => signalUrl(fromConfig, s);
    return { on: true, traces: url("traces"), metrics: url("metrics"), logs: url("logs"), source: "config", headers, envHeaders: NONE };
  }
  const base = fromEnv || DEFAULT_OTLP_ENDPOINT;
  const url = (s: Signal) => specific[s] || signalUrl(base, s);
  const named = (s: Signal) => specific[s] !== "" || fromEnv !== "";
  const envHeaders = { traces: named("traces"), metrics: named("metrics"), logs: named("logs") };
  const source = config.enabled === true && !fromEnv && !anySpecific ? "config" : "env";
  return { on: true, traces: url("traces"), metrics: url("metrics"), logs: url("logs"), source, headers, envHeaders };
}

/**
 * The configured headers one signal's exporter gets. With the environment's endpoint, the user's own `headers` (set
 * without an endpoint of their own) are meant for that endpoint: a signal the environment did not name, which falls
 * back to the default endpoint, gets none of them either.
 */
export function signalHeaders(targets: TelemetryTargets, signal: Signal): Record<string, string> {
  return targets.source === "env" && !targets.envHeaders[signal] ? {} : targets.headers;
}
