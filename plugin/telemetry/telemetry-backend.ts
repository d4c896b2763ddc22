/** The contract between the telemetry switch (telemetry.ts) and the on-demand SDK chunk (otel-backend.ts). */
import type { HostSignal } from "./host-signals.ts";

/** What the on-demand OpenTelemetry chunk (otel-backend.ts) offers once loaded. */
export interface TelemetryBackend {
  audit(type: string, data: Record<string, unknown>): void;
  /** `start`: before governance handles the event; `done`: after (turns close once their events are handled). */
  event(signals: readonly HostSignal[], phase: "start" | "done"): void;
  hook(name: string, ms: number): void;
  flush(): Promise<void>;
  /** Ends open turns and exports what is queued, within the export timeout. */
  shutdown(): Promise<void>;
}

export type TelemetryBackendOptions = {
  env: Readonly<Record<string, string | undefined>>;
  exportTimeoutMs: number;
  toolSpans: boolean;
  /** Free text in exported attributes: the user's or the organisation's `telemetry.includeText` (issue 27 §3). */
  includeText: boolean;
  roleOf: (agent: string | undefined) => string;
  now: () => number;
  version: string;
  instanceId: string;
  /** A signal's export failed (once per outage). Must not throw. */
  report: (signal: string, reason: string) => void;
  /** Today's and this week's spend against the caps over time (issue 44), read at each metric export. */
  spend?: () => readonly SpendGaugeRow[];
};

/** One cap's window for the `governance.spend` gauge: its use by key and its (raised) limits. */
export type SpendGaugeRow = { cap: string; window: string; use: Readonly<Record<string, number>>; limits: Readonly<Record<string, number>> };
