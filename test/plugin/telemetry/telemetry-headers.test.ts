import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { startRecordingCollector } from "../../harness/otlp-receiver.ts";
import { inProcessPlugin } from "./in-process-plugin.ts";

/**
 * Issue 27 §3, in-process with the real OpenTelemetry SDK: an endpoint from the user's own config file gets that
 * file's headers and never the environment's OTEL_EXPORTER_OTLP_HEADERS (credentials go only where the layer that
 * holds them sends them); the environment's own endpoint still gets its headers. OpenCode's process environment is
 * left as it was.
 */
const SESSION = "ses_telemetryheaders00000001";
const plugins = inProcessPlugin();

async function exportOnce(userYaml: string, env: Record<string, string>): Promise<void> {
  const dir = plugins.project("ocg-otel-headers-", "phase: headers\n");
  fs.mkdirSync(path.join(dir, "cfg", "opencode"), { recursive: true });
  fs.writeFileSync(path.join(dir, "cfg", "opencode", "governance.yaml"), userYaml);
  const hooks = await plugins.start(dir, { XDG_CONFIG_HOME: path.join(dir, "cfg"), OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_BLRP_SCHEDULE_DELAY: "50", ...env });
  const ev = (event: unknown) => hooks.event!({ event });
  await ev({ type: "session.created", properties: { sessionID: SESSION, info: { id: SESSION } } });
  await ev({ type: "session.status", properties: { sessionID: SESSION, status: { type: "busy" } } });
  await ev({ type: "session.status", properties: { sessionID: SESSION, status: { type: "idle" } } });
  await new Promise((r) => setTimeout(r, 500));
  await hooks.dispose!();
}

describe("which headers go with which endpoint", () => {
  test("the user's file endpoint: the file's headers only; OTEL_EXPORTER_OTLP_HEADERS stays in the environment, unsent", async () => {
    const collector = await startRecordingCollector();
    try {
      await exportOnce(`telemetry:\n  endpoint: ${collector.url}\n  headers:\n    x-user-file: from-file\n`, {
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer ENV-SECRET",
        OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-logs=ENV-LOGS",
      });
      expect(collector.requests.length).toBeGreaterThan(0);
      for (const r of collector.requests) {
        expect(r.headers["x-user-file"]).toBe("from-file");
        expect(r.headers.authorization).toBeUndefined();
        expect(r.headers["x-logs"]).toBeUndefined();
      }
      expect(process.env.OTEL_EXPORTER_OTLP_HEADERS).toBe("authorization=Bearer ENV-SECRET");
    } finally {
      await collector.close();
    }
  });

  test("the environment's endpoint: the environment's headers", async () => {
    const collector = await startRecordingCollector();
    try {
      await exportOnce("enforcement: enforce\n", { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer ENV-SECRET" });
      expect(collector.requests.length).toBeGreaterThan(0);
      for (const r of collector.requests) expect(r.headers.authorization).toBe("Bearer ENV-SECRET");
    } finally {
      await collector.close();
    }
  });
});
