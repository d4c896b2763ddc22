import { describe, expect, test } from "vitest";
import { DEFAULT_CONFIG, type TelemetryConfig } from "../../../governance/config/config.ts";
import { signalHeaders, type TelemetryTargets, telemetrySwitch } from "../../../governance/telemetry/telemetry-switch.ts";

const config = (t: Partial<TelemetryConfig> = {}): TelemetryConfig => ({ ...DEFAULT_CONFIG.telemetry, ...t });

describe("telemetrySwitch: off by default, one switch shared with OpenCode's own export", () => {
  test("defaults: off without any OTLP variable; the config default is auto", () => {
    expect(DEFAULT_CONFIG.telemetry).toEqual({ enabled: "auto", endpoint: "", headers: {}, toolSpans: false, includeText: false, exportTimeout: 5_000 });
    expect(telemetrySwitch(config(), {})).toMatchObject({ on: false });
    expect(telemetrySwitch(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toMatchObject({ on: false });
  });

  test("OTEL_EXPORTER_OTLP_ENDPOINT turns it on; each signal gets /v1/<signal>", () => {
    expect(telemetrySwitch(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toEqual({
      on: true,
      traces: "http://collector:4318/v1/traces",
      metrics: "http://collector:4318/v1/metrics",
      logs: "http://collector:4318/v1/logs",
      source: "env",
      headers: {},
      envHeaders: { traces: true, metrics: true, logs: true },
    });
  });

  test("a signal-specific variable is used as is and alone turns export on (the others go to the default endpoint)", () => {
    const sw = telemetrySwitch(config(), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://tempo:4318/custom/traces" });
    expect(sw).toMatchObject({ on: true, traces: "http://tempo:4318/custom/traces", logs: "http://localhost:4318/v1/logs", source: "env" });
    const mixed = telemetrySwitch(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs:9/x" });
    expect(mixed).toMatchObject({ traces: "http://c:4318/v1/traces", logs: "http://logs:9/x" });
  });

  test("a config endpoint turns it on and wins over every variable, with its own headers only; true forces the default endpoint", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://other:4318", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: "http://logs:9/x" };
    expect(telemetrySwitch(config({ endpoint: "http://127.0.0.1:9999", headers: { "x-org": "k" } }), env)).toMatchObject({
      on: true,
      traces: "http://127.0.0.1:9999/v1/traces",
      logs: "http://127.0.0.1:9999/v1/logs",
      source: "config",
      headers: { "x-org": "k" },
      envHeaders: { traces: false, metrics: false, logs: false },
    });
    expect(telemetrySwitch(config({ enabled: true }), {})).toMatchObject({ on: true, metrics: "http://localhost:4318/v1/metrics", source: "config" });
  });

  test("enabled: false and OTEL_SDK_DISABLED=true win over every endpoint", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(telemetrySwitch(config({ enabled: false, endpoint: "http://x:1" }), env)).toMatchObject({ on: false, reason: "telemetry.enabled is false" });
    expect(telemetrySwitch(config({ enabled: true }), { ...env, OTEL_SDK_DISABLED: "TRUE" })).toMatchObject({ on: false });
  });
});

describe("credentials from the environment go only to an endpoint the environment named (issue 41 §5)", () => {
  const targets = (config: TelemetryConfig, env: Record<string, string>): TelemetryTargets => {
    const sw = telemetrySwitch(config, env);
    if (!sw.on) throw new Error(sw.reason);
    return sw;
  };

  test("only a traces endpoint named: metrics and logs fall back to the default port without the environment's headers", () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://tempo:4318/v1/traces", OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer u" };
    const t = targets(config({ headers: { "x-user": "u" } }), env);
    expect(t.envHeaders).toEqual({ traces: true, metrics: false, logs: false });
    expect(t.metrics).toBe("http://localhost:4318/v1/metrics");
    expect(signalHeaders(t, "traces")).toEqual({ "x-user": "u" });
    expect(signalHeaders(t, "metrics")).toEqual({});
    expect(signalHeaders(t, "logs")).toEqual({});
  });

  test("enabled: true with no endpoint anywhere: the default port, with no environment headers", () => {
    const t = targets(config({ enabled: true }), { OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer u" });
    expect(t).toMatchObject({ source: "config", traces: "http://localhost:4318/v1/traces", envHeaders: { traces: false, metrics: false, logs: false } });
  });

  test("the general variable names every signal", () => {
    const t = targets(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "a=b" });
    expect(t.envHeaders).toEqual({ traces: true, metrics: true, logs: true });
  });
});
