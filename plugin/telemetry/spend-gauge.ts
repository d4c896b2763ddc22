import type { Meter } from "@opentelemetry/api";
import type { TelemetryBackendOptions } from "./telemetry-backend.ts";

/**
 * The `governance.spend` gauge (issue 44, docs/observability.md): each cap's use by key in its window, and its limit
 * where one is set (raises included), read from the spend ledgers at each metric export. Keys neither used nor capped
 * are left out, so an idle project exports nothing but its capped keys.
 */
export function observeSpend(meter: Meter, rows: TelemetryBackendOptions["spend"]): void {
  meter
    .createObservableGauge("governance.spend", {
      description: "Spend of the project / the user today and this week (cost in USD, tokens, model requests), and the caps",
    })
    .addCallback((result) => {
      for (const row of rows?.() ?? []) {
        for (const [key, used] of Object.entries(row.use)) {
          const limit = row.limits[key];
          if (used === 0 && limit === undefined) continue;
          const attrs = { "governance.cap": row.cap, "governance.window": row.window, "governance.budget.key": key };
          result.observe(used, { ...attrs, "governance.spend.of": "used" });
          if (limit !== undefined) result.observe(limit, { ...attrs, "governance.spend.of": "limit" });
        }
      }
    });
}
