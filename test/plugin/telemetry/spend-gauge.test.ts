import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { observeSpend } from "../../../plugin/telemetry/spend-gauge.ts";
import type { SpendGaugeRow } from "../../../plugin/telemetry/telemetry-backend.ts";

/** The `governance.spend` gauge (issue 44): today's and this week's spend against the caps, as a collector reads it. */
class Reader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

describe("governance.spend", () => {
  it("exports each cap's use by key and its limit where one is set; keys neither used nor capped are left out", async () => {
    const reader = new Reader();
    const provider = new MeterProvider({ readers: [reader] });
    const rows: SpendGaugeRow[] = [
      { cap: "project.daily", window: "2026-11-28", use: { cost: 0.5, modelRequests: 3, tokens: 0 }, limits: { cost: 1 } },
      { cap: "user.weekly", window: "2026-W48", use: { cost: 12, modelRequests: 0 }, limits: { modelRequests: 100 } },
    ];
    observeSpend(provider.getMeter("test"), () => rows);
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === "governance.spend");
    const points = (metric?.dataPoints ?? []).map((p) => [
      p.attributes["governance.cap"],
      p.attributes["governance.window"],
      p.attributes["governance.budget.key"],
      p.attributes["governance.spend.of"],
      p.value,
    ]);
    expect(points).toEqual([
      ["project.daily", "2026-11-28", "cost", "used", 0.5],
      ["project.daily", "2026-11-28", "cost", "limit", 1],
      ["project.daily", "2026-11-28", "modelRequests", "used", 3],
      ["user.weekly", "2026-W48", "cost", "used", 12],
      ["user.weekly", "2026-W48", "modelRequests", "used", 0],
      ["user.weekly", "2026-W48", "modelRequests", "limit", 100],
    ]);
    await provider.shutdown();
  });
});
