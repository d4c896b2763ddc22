import { type Attributes, ROOT_CONTEXT } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { auditAttributes, TELEMETRY_MAP } from "../../governance/telemetry/telemetry-map.ts";
import { type Signal, signalHeaders, type TelemetryTargets } from "../../governance/telemetry/telemetry-switch.ts";
import { CompleteTraces } from "./complete-traces.ts";
import type { TelemetryBackend, TelemetryBackendOptions } from "./telemetry-backend.ts";
import { TurnSpans } from "./turn-spans.ts";
import { observeSpend } from "./spend-gauge.ts";

/** Items queued per signal before new ones are dropped (the SDK's default, stated). */
const MAX_QUEUE = 2_048;
const SCOPE = "opencode-governance";

type Env = Readonly<Record<string, string | undefined>>;

function envMs(env: Env, name: string, fallback: number): number {
  const v = Number(env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** The SDK's export result (`@opentelemetry/core`'s ExportResult; code 0 = success). */
type ExportResult = { code: number; error?: Error };

/** Anything with `export(items, done)`: the three OTLP exporters. */
type Exporter<T> = { export(items: T, done: (result: ExportResult) => void): void };

/**
 * Reports the first failed export of a signal (one audit line), and again only after an export of it succeeded:
 * a dead, slow or failing collector costs one line per outage, never one per batch.
 */
function reporting<T, E extends Exporter<T>>(exporter: E, signal: string, report: TelemetryBackendOptions["report"]): E {
  const original = exporter.export.bind(exporter);
  let failing = false;
  exporter.export = (items: T, done: (result: ExportResult) => void) =>
    original(items, (result) => {
      if (result.code === 0) failing = false;
      else if (!failing) {
        failing = true;
        report(signal, result.error?.message ?? "export failed");
      }
      done(result);
    });
  return exporter;
}

const HEADER_VARIABLES = [
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
  "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
];

/**
 * Builds an exporter. The OTLP exporters merge `OTEL_EXPORTER_OTLP_*HEADERS` from `process.env` into every request
 * whatever headers they are given, read once, synchronously, in their constructor. For an endpoint from a config
 * file those variables are hidden for exactly that synchronous call (no other code runs meanwhile; OpenCode's own
 * exporter keeps them), so the user's credentials never go to an endpoint their environment did not name.
 */
function construct<E>(targets: TelemetryTargets, signal: Signal, make: () => E): E {
  if (targets.envHeaders[signal]) return make();
  const saved = HEADER_VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const [name] of saved) delete process.env[name];
  try {
    return make();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

/**
 * The OpenTelemetry SDK, loaded on demand only when the switch is on (scripts/build.ts refuses a start path that
 * contains it). Own providers, never registered as the process globals: OpenCode runs its own SDK in the same
 * process. OTLP/HTTP JSON to the switch's URLs; headers: the switch's, plus `OTEL_EXPORTER_OTLP_HEADERS` only for the
 * environment's own endpoint ({@link construct}).
 * Every export is bounded: queue of 2,048 per signal (then dropped), `exportTimeout` per export including the
 * exporter's own retries (at most 5 attempts, only for 429/502/503/504 and network errors, inside that time).
 */
export function createOtelBackend(targets: TelemetryTargets, o: TelemetryBackendOptions): TelemetryBackend {
  const env = o.env;
  const timeoutMillis = o.exportTimeoutMs;
  const resource = resourceFromAttributes({
    "service.name": SCOPE,
    "service.version": o.version,
    "service.instance.id": o.instanceId,
  });

  const spans = new CompleteTraces(
    new BatchSpanProcessor(
      reporting(
        construct(targets, "traces", () => new OTLPTraceExporter({ url: targets.traces, timeoutMillis, headers: signalHeaders(targets, "traces") })),
        "traces",
        o.report,
      ),
      {
        maxQueueSize: MAX_QUEUE,
        scheduledDelayMillis: envMs(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000),
        exportTimeoutMillis: timeoutMillis,
      },
    ),
  );
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [spans] });
  const turns = new TurnSpans({
    tracer: tracerProvider.getTracer(SCOPE, o.version),
    roleOf: o.roleOf,
    toolSpans: o.toolSpans,
    includeText: o.includeText,
    now: o.now,
  });

  const interval = envMs(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000);
  const reader = new PeriodicExportingMetricReader({
    exporter: reporting(
      construct(targets, "metrics", () => new OTLPMetricExporter({ url: targets.metrics, timeoutMillis, headers: signalHeaders(targets, "metrics") })),
      "metrics",
      o.report,
    ),
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(timeoutMillis, interval),
  });
  const meterProvider = new MeterProvider({ resource, readers: [reader] });
  const meter = meterProvider.getMeter(SCOPE, o.version);
  const counters = new Map<string, ReturnType<typeof meter.createCounter>>();
  const counter = (name: string) => {
    let c = counters.get(name);
    if (!c) {
      c = meter.createCounter(name, { unit: "{event}" });
      counters.set(name, c);
    }
    return c;
  };
  const hookDuration = meter.createHistogram("governance.hook.duration", {
    unit: "s",
    description: "Time governance spends in each OpenCode hook call",
    advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] },
  });
  meter
    .createObservableGauge("governance.sessions", { unit: "{session}", description: "Sessions this process knows, by governance state and depth" })
    .addCallback((result) => {
      for (const row of turns.census().values()) result.observe(row.count, { "governance.state": row.state, "governance.depth": row.depth });
    });

  observeSpend(meter, o.spend);

  const loggerProvider = new LoggerProvider({
    resource,
    processors: [
      new BatchLogRecordProcessor({
        exporter: reporting(
          construct(targets, "logs", () => new OTLPLogExporter({ url: targets.logs, timeoutMillis, headers: signalHeaders(targets, "logs") })),
          "logs",
          o.report,
        ),
        maxQueueSize: MAX_QUEUE,
        scheduledDelayMillis: envMs(env, "OTEL_BLRP_SCHEDULE_DELAY", 1_000),
        exportTimeoutMillis: timeoutMillis,
      }),
    ],
  });
  const logger = loggerProvider.getLogger(SCOPE, o.version);

  return {
    audit(type, data) {
      turns.audit(type, data);
      const mapping = TELEMETRY_MAP[type];
      if (mapping?.count && (mapping.count.when?.(data) ?? true)) counter(mapping.count.metric).add(1, mapping.count.attrs(data));
      const attributes: Attributes = auditAttributes(type, data, { includeText: o.includeText });
      const warn = type.endsWith("_problem") || type.endsWith("_error") || type.endsWith("_failed") || type === "emergency_halt";
      logger.emit({
        timestamp: o.now(),
        severityNumber: warn ? SeverityNumber.WARN : SeverityNumber.INFO,
        severityText: warn ? "WARN" : "INFO",
        eventName: `governance.${type}`,
        body: type,
        attributes,
        context: turns.contextOf(typeof data.sessionId === "string" ? data.sessionId : undefined) ?? ROOT_CONTEXT,
      });
    },
    event(sigs, phase) {
      const sessionId = sigs[0]?.sessionId;
      if (!sessionId) return;
      if (phase === "done") return turns.handling(sessionId, -1);
      turns.handling(sessionId, 1);
      for (const sig of sigs) turns.signal(sig);
    },
    hook(name, ms) {
      hookDuration.record(ms / 1000, { "governance.hook": name });
    },
    async shutdown() {
      turns.endAll();
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown(), loggerProvider.shutdown()]);
    },
    async flush() {
      await Promise.allSettled([tracerProvider.forceFlush(), meterProvider.forceFlush(), loggerProvider.forceFlush()]);
    },
  };
}
