import http from "node:http";
import type { AddressInfo } from "node:net";
// @ts-expect-error -- @elastic/mockotlpserver ships no types for its module entry.
import { MockOtlpServer, normalizeLogs, normalizeMetrics, normalizeTrace } from "@elastic/mockotlpserver";

type AttrValue = string | number | boolean | string[] | undefined;
export type Attrs = Record<string, AttrValue>;

/** One received span, flattened: hex ids, attributes as an object, the emitting service. */
export type ReceivedSpan = {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: string;
  attributes: Attrs;
  events: { name: string; attributes: Attrs }[];
  status: { code?: string | number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
};
export type ReceivedMetric = { service: string; name: string; unit?: string; points: { attributes: Attrs; value: number }[] };
export type ReceivedLog = { service: string; body: unknown; eventName?: string; severityText?: string; traceId: string; spanId: string; attributes: Attrs };

/**
 * A real OTLP receiver on 127.0.0.1 for the tests: `@elastic/mockotlpserver` (what Elastic's own Node SDK tests use),
 * HTTP only (OTLP/HTTP JSON and protobuf, decoded by the real protobuf definitions), through its module API with
 * callbacks — its UI service, which writes files into its own package folder, is never started.
 */
export async function startOtlpReceiver(): Promise<{
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  logs: ReceivedLog[];
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const logs: ReceivedLog[] = [];
  const serviceOf = (resource: { attributes?: Attrs } | undefined) => String(resource?.attributes?.["service.name"] ?? "?");
  const server = new MockOtlpServer({
    services: ["http"],
    httpHostname: "127.0.0.1",
    httpPort: 0,
    logLevel: "warn",
    onTrace: (raw: unknown) => {
      const t = normalizeTrace(raw);
      for (const rs of t.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service: serviceOf(rs.resource),
              scope: String(ss.scope?.name ?? ""),
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: String(s.kind),
              attributes: s.attributes ?? {},
              events: (s.events ?? []).map((e: { name: string; attributes?: Attrs }) => ({ name: e.name, attributes: e.attributes ?? {} })),
              status: s.status ?? {},
              startTimeUnixNano: String(s.startTimeUnixNano ?? "0"),
              endTimeUnixNano: String(s.endTimeUnixNano ?? "0"),
            });
    },
    onMetrics: (raw: unknown) => {
      const m = normalizeMetrics(raw);
      for (const rm of m.resourceMetrics ?? [])
        for (const sm of rm.scopeMetrics ?? [])
          for (const metric of sm.metrics ?? []) {
            const data = metric.sum ?? metric.gauge ?? metric.histogram;
            const points = (data?.dataPoints ?? []).map((p: { attributes?: Attrs; asInt?: string | number; asDouble?: number; count?: string | number }) => ({
              attributes: p.attributes ?? {},
              value: Number(p.asInt ?? p.asDouble ?? p.count ?? 0),
            }));
            metrics.push({ service: serviceOf(rm.resource), name: metric.name, unit: metric.unit, points });
          }
    },
    onLogs: (raw: unknown) => {
      const l = normalizeLogs(raw);
      for (const rl of l.resourceLogs ?? [])
        for (const sl of rl.scopeLogs ?? [])
          for (const r of sl.logRecords ?? [])
            logs.push({
              service: serviceOf(rl.resource),
              body: r.body?.stringValue ?? r.body,
              eventName: r.eventName,
              severityText: r.severityText,
              traceId: r.traceId ?? "",
              spanId: r.spanId ?? "",
              attributes: r.attributes ?? {},
            });
    },
  });
  await server.start();
  return { url: String(server.httpUrl).replace(/\/$/, ""), spans, metrics, logs, close: () => server.close() };
}

/**
 * A collector that misbehaves, for the failure tests: `status` answers every request with that code (500), `delayMs`
 * answers only after that long (a slow collector). Counts requests per path (to prove retries are bounded).
 */
export async function startBadCollector(opts: {
  status?: number;
  delayMs?: number;
}): Promise<{ url: string; requests: Map<string, number>; close(): Promise<void> }> {
  const requests = new Map<string, number>();
  const pending = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    requests.set(req.url ?? "?", (requests.get(req.url ?? "?") ?? 0) + 1);
    req.resume();
    const answer = () => {
      res.writeHead(opts.status ?? 200, { "content-type": "application/json" });
      res.end("{}");
    };
    if (opts.delayMs) {
      const t = setTimeout(answer, opts.delayMs);
      pending.add(t);
    } else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of pending) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One HTTP request as it arrived: path, headers (lower-case names) and the exact body bytes. */
export type RecordedRequest = { path: string; headers: http.IncomingHttpHeaders; body: Buffer };

/**
 * Records every request byte for byte (headers and body) before anything decodes it, then forwards it to `target`
 * (the real receiver above) or, without one, answers 200 itself — a collector a hostile repository would run.
 * For tests that must see EVERY exported byte (issue 27 §3), not only what a decoder keeps. `listen`: where (default a
 * free port on 127.0.0.1; the OTLP default port 4318 for tests of what reaches it).
 */
export async function startRecordingCollector(
  target?: string,
  listen: { port: number; host: string } = { port: 0, host: "127.0.0.1" },
): Promise<{ url: string; requests: RecordedRequest[]; close(): Promise<void> }> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({ path: req.url ?? "", headers: req.headers, body });
      if (!target) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{}");
        return;
      }
      const out = http.request(
        `${target}${req.url ?? ""}`,
        { method: req.method, headers: { "content-type": req.headers["content-type"] ?? "application/json" } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "application/json" });
          answer.pipe(res);
        },
      );
      out.on("error", () => {
        res.writeHead(502);
        res.end();
      });
      out.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${listen.host.includes(":") ? `[${listen.host}]` : listen.host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
