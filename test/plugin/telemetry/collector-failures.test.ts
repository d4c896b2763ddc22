import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { startBadCollector, startOtlpReceiver } from "../../harness/otlp-receiver.ts";
import { type Hooks, inProcessPlugin } from "./in-process-plugin.ts";

/**
 * A collector that is down, slow (10 s) or answering 500 never slows or breaks a session (issue 18): the plugin's
 * hooks, driven in-process exactly as OpenCode calls them, take the same time as with telemetry off; each signal's
 * failure is reported once; requests to the collector stay bounded; dispose does not hang.
 */
const SESSION = "ses_telemetryfailure0000001";
const CALLS = 150;

const plugins = inProcessPlugin();

const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_BLRP_SCHEDULE_DELAY: "50", OTEL_METRIC_EXPORT_INTERVAL: "200" };

async function start(yaml: string, env: Record<string, string>): Promise<{ hooks: Hooks; dir: string; audit: () => { type: string; [k: string]: unknown }[] }> {
  // The loop guard (docs/budgets.md) would stop this synthetic session's repetitive calls: not what is measured here.
  const dir = plugins.project("ocg-otel-", `${yaml}loops:\n  enabled: false\n`);
  const hooks = await plugins.start(dir, env);
  const auditFile = path.join(dir, ".opencode", "governance", "audit.log");
  const audit = () =>
    fs.existsSync(auditFile)
      ? fs
          .readFileSync(auditFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return { hooks, dir, audit };
}

/** One busy turn with CALLS tool calls (before + after each); returns each call's hook time in ms. */
async function turn(hooks: Hooks): Promise<number[]> {
  const ev = (event: unknown) => hooks.event!({ event });
  await ev({ type: "session.created", properties: { sessionID: SESSION, info: { id: SESSION } } });
  await ev({ type: "session.status", properties: { sessionID: SESSION, status: { type: "busy" } } });
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t0 = performance.now();
    await hooks["tool.execute.before"]!({ tool: "read", sessionID: SESSION, callID: `c${i}` }, { args: { filePath: "a.txt" } });
    await hooks["tool.execute.after"]!(
      { tool: "read", sessionID: SESSION, callID: `c${i}`, args: { filePath: "a.txt" } },
      { title: "", output: "x", metadata: {} },
    );
    times.push(performance.now() - t0);
  }
  await ev({ type: "session.status", properties: { sessionID: SESSION, status: { type: "idle" } } });
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function deadPort(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const until = async (check: () => boolean, what: string, ms = 8_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe("a bad collector never slows or breaks a session", () => {
  test("telemetry off: no SDK loaded, no telemetry audit line (the baseline the others are held to)", async () => {
    const { hooks, audit } = await start("telemetry:\n  enabled: false\n", {});
    const times = await turn(hooks);
    await hooks.dispose!();
    expect(audit().some((e) => e.type.startsWith("telemetry_"))).toBe(false);
    expect(median(times)).toBeLessThan(50);
  });

  test.each([
    ["down (connection refused)", "dead"],
    ["slow (answers after 10 s)", "slow"],
    ["answering 500", "500"],
  ])(
    "collector %s: hooks as fast as with telemetry off, one audit line per signal, bounded requests, quick dispose",
    async (_name, kind) => {
      const off = await start("telemetry:\n  enabled: false\n", {});
      const baseline = await turn(off.hooks);
      await off.hooks.dispose!();

      const bad = kind === "dead" ? undefined : await startBadCollector(kind === "slow" ? { delayMs: 10_000 } : { status: 500 });
      const url = bad?.url ?? (await deadPort());
      try {
        const began = Date.now();
        const { hooks, audit } = await start("telemetry:\n  exportTimeout: 1s\n", { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: url });
        await until(() => audit().some((e) => e.type === "telemetry_started"), "telemetry started");
        const times = await turn(hooks);
        // Each signal's failure is reported, once: metrics export every 200 ms, so several attempts have failed by now.
        await until(
          () =>
            new Set(
              audit()
                .filter((e) => e.type === "telemetry_export_failed")
                .map((e) => e.signal),
            ).size === 3,
          `three failure reports: ${JSON.stringify(audit().filter((e) => e.type.startsWith("telemetry")))}`,
          10_000,
        );
        await new Promise((r) => setTimeout(r, 1_500));
        const failures = audit().filter((e) => e.type === "telemetry_export_failed");
        expect(failures.map((e) => e.signal).sort()).toEqual(["logs", "metrics", "traces"]);
        expect(failures.every((e) => e.dropped === true && typeof e.reason === "string")).toBe(true);

        console.log(
          `collector ${kind}: tool hook pair median ${median(times).toFixed(3)} ms (telemetry off ${median(baseline).toFixed(3)} ms), max ${Math.max(...times).toFixed(1)} ms`,
        );
        // Hook time within noise of the telemetry-off run (both medians are well under a millisecond or two).
        expect(median(times), `median on ${median(times).toFixed(2)} ms vs off ${median(baseline).toFixed(2)} ms`).toBeLessThan(median(baseline) * 2 + 1);
        // No retry storm: a 500 is final, a refused connection is retried at most 5 times within the 1 s timeout.
        const elapsed = Date.now() - began;
        if (bad) {
          const total = [...bad.requests.values()].reduce((a, b) => a + b, 0);
          const metricsRequests = bad.requests.get("/v1/metrics") ?? 0;
          expect(metricsRequests, `${metricsRequests} metric exports in ${elapsed} ms`).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 2);
          expect(total).toBeLessThan(200);
        }
        const t0 = Date.now();
        await hooks.dispose!();
        expect(Date.now() - t0, "dispose waits at most ~2 s for the last export").toBeLessThan(3_500);
      } finally {
        await bad?.close();
      }
    },
    40_000,
  );

  test("control: with a working receiver, the same turn arrives as an invoke_agent span (so the failure tests above can fail)", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const { hooks, audit } = await start("telemetry:\n  toolSpans: true\n", { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
      await until(() => audit().some((e) => e.type === "telemetry_started"), "telemetry started");
      await turn(hooks);
      await hooks.dispose!();
      expect(receiver.spans.filter((s) => s.name.startsWith("invoke_agent") && s.attributes["gen_ai.conversation.id"] === SESSION).length).toBe(1);
      expect(audit().some((e) => e.type === "telemetry_export_failed")).toBe(false);
    } finally {
      await receiver.close();
    }
  }, 20_000);
});
