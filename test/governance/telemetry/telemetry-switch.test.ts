import { describe, expect, test } from "vitest";
import { DEFAULT_CONFIG, type TelemetryConfig } from "../../../governance/config/config.ts";
import { telemetrySwitch } from "../../../governance/telemetry/telemetry-switch.ts";

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
      envHeaders: true,
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
      envHeaders: false,
    });
    expect(telemetrySwitch(config({ enabled: true }), {})).toMatchObject({ on: true, metrics: "http://localhost:4318/v1/metrics", source: "config" });
  });

  test("enabled: false and OTEL_SDK_DISABLED=true win over every endpoint", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(telemetrySwitch(config({ enabled: false, endpoint: "http://x:1" }), env)).toMatchObject({ on: false, reason: "telemetry.enabled is false" });
    expect(telemetrySwitch(config({ enabled: true }), { ...env, OTEL_SDK_DISABLED: "TRUE" })).toMatchObject({ on: false });
  });
});
