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
   * Whether `OTEL_EXPORTER_OTLP_*HEADERS` go too: only to the environment's own endpoint. An endpoint from a config
   * file gets that file's headers alone (issue 27 §3: credentials go only where the layer that holds them sends them).
   */
  envHeaders: boolean;
};

export type TelemetrySwitch = ({ on: true } & TelemetryTargets) | { on: false; reason: string };

/** The OTLP/HTTP default of every OpenTelemetry SDK (and of OpenCode's exporter). */
export const DEFAULT_OTLP_ENDPOINT = "http://localhost:4318";

type Env = Readonly<Record<string, string | undefined>>;

const SIGNALS = ["traces", "metrics", "logs"] as const;

function trimmed(value: string | undefined): string {
  return (value ?? "").trim();
}

/** `${base}/v1/<signal>`, as the OTLP exporter specification builds a signal URL from the general endpoint. */
function signalUrl(base: string, signal: (typeof SIGNALS)[number]): string {
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/**
 * The one switch (issue 18): off by default; on when OpenCode's own export would be on (`OTEL_EXPORTER_OTLP_ENDPOINT`
 * or a signal-specific `OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_ENDPOINT`), or when the config says so.
 * `enabled: false` and `OTEL_SDK_DISABLED=true` win over everything. A signal-specific variable is used as is (the
 * specification's rule); a base endpoint gets `/v1/<signal>` appended. A config endpoint (the user's own file or the
 * organisation's policy; a project's is refused before it gets here) wins over every variable, and carries only its
 * own file's headers.
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
    const url = (s: (typeof SIGNALS)[number]) => signalUrl(fromConfig, s);
    return { on: true, traces: url("traces"), metrics: url("metrics"), logs: url("logs"), source: "config", headers, envHeaders: false };
  }
  const base = fromEnv || DEFAULT_OTLP_ENDPOINT;
  const url = (s: (typeof SIGNALS)[number]) => specific[s] || signalUrl(base, s);
  const source = config.enabled === true && !fromEnv && !anySpecific ? "config" : "env";
  return { on: true, traces: url("traces"), metrics: url("metrics"), logs: url("logs"), source, headers, envHeaders: true };
}
