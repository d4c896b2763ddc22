import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LoadedConfig } from "../governance/config/config.ts";
import { requestInject, requestStop, type ControlContext } from "../governance/stop/control-requests.ts";
import { ackLine, awaitStopAcks, stopHeld } from "../governance/stop/stop-ack.ts";
import { type ConnectionBounds, ConnectionGate } from "./dashboard-connections.ts";
import { checkRequest, parseControlBody } from "./dashboard-guard.ts";
import { DASHBOARD_PAGE, DASHBOARD_SCRIPT, DASHBOARD_STYLE } from "./dashboard-page.ts";
import { buildSnapshot, changeSignature } from "./dashboard-snapshot.ts";
import { readConfig } from "./read-config.ts";
import { safeJson } from "./output.ts";

/**
 * The local web dashboard: the live session tree with Stop and Inject, the resumable sessions with the command
 * that resumes each, and the audit tail. It writes the same requests as the CLI.
 *
 * It listens on 127.0.0.1 only; every request passes {@link checkRequest} (Host and Origin pinned to that address
 * and port, the random token required for data and actions), and every answer carries a strict CSP without inline
 * script, `frame-ancestors 'none'` and `Referrer-Policy: no-referrer`. The page is live through server-sent events:
 * while a page is connected the server stats the governance folder (a few `stat` calls) and pushes a new snapshot
 * when it changed. Connections that have not shown the token are bounded (an idle timeout and a cap, closing the one
 * idle longest: {@link ConnectionGate}), so a flood of idle sockets cannot keep the user's own request out.
 */
export type Dashboard = {
  url: string;
  token: string;
  /** Pages connected to the live stream now; a page closed or navigated away is released at once (and with the last one, the folder watch idles). */
  liveConnections(): number;
  /** The bound on connections that have not shown the token. */
  connections: ConnectionGate;
  close(): Promise<void>;
};

export type DashboardOptions = {
  port?: number;
  maxInjectLength?: number;
  /** How long a Stop waits for OpenCode to take it (governance/stop/stop-ack.ts); the default there. */
  stopAckWaitMs?: number;
  /** The config as read-only commands see it (resume window, anchors); defaults when absent. */
  config?: () => Promise<LoadedConfig>;
  /** How often the governance folder is checked for changes while a page is connected. Default 250 ms. */
  watchIntervalMs?: number;
  /** Bounds on connections before the token is checked (cli/dashboard-connections.ts); defaults when absent. */
  connections?: Partial<ConnectionBounds>;
};

const MAX_BODY = 16 * 1024;
/** A client that keeps sending far past the limit is cut off (the 413 has been answered by then). */
const MAX_DRAIN = 1024 * 1024;

const SECURITY_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

function send(res: http.ServerResponse, status: number, body: unknown, type = "application/json", extra: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  const text = type === "application/json" ? safeJson(body) : String(body);
  res.writeHead(status, { ...SECURITY_HEADERS, ...extra, "content-type": `${type}; charset=utf-8`, "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

type Body = { ok: true; value: unknown } | { ok: false; status: number; error: string };

/** Reads the whole body; an oversized one is read to the end (up to {@link MAX_DRAIN}) and refused with 413, no reset. */
function readBody(req: http.IncomingMessage): Promise<Body> {
  return new Promise((resolve) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
      else if (size > MAX_DRAIN) {
        resolve({ ok: false, status: 413, error: `request body over ${MAX_BODY} bytes` });
        req.pause();
      }
    });
    req.on("end", () => {
      if (size > MAX_BODY) return resolve({ ok: false, status: 413, error: `request body over ${MAX_BODY} bytes` });
      try {
        resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      } catch {
        resolve({ ok: false, status: 400, error: "request body is not JSON" });
      }
    });
    req.on("error", () => resolve({ ok: false, status: 400, error: "request body could not be read" }));
  });
}

export async function startDashboard(ctx: ControlContext, opts: DashboardOptions = {}): Promise<Dashboard> {
  const token = randomBytes(18).toString("base64url");
  const config = opts.config ?? (() => readConfig(ctx.paths.configFile));
  const streams = new Set<http.ServerResponse>();
  let port = 0;

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug, not a bad request: say so without details that could leak paths.
      process.stderr.write(`dashboard: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      send(res, 500, { error: "internal error (see the dashboard's terminal)" });
    });
  });
  const gate = new ConnectionGate(server, opts.connections);
  // Malformed HTTP (bad request line, oversized headers) is answered 400/431 by Node itself; never crash on it.
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    else socket.destroy();
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const checked = checkRequest(req, { port, token });
    if (!checked.ok) {
      req.resume();
      return send(res, checked.refusal.status, { error: checked.refusal.error }, "application/json", checked.refusal.headers);
    }
    const { route } = checked;
    if (route.auth !== "none") gate.prove(req.socket);
    if (route.path === "/") return send(res, 200, DASHBOARD_PAGE, "text/html");
    if (route.path === "/dashboard.js") return send(res, 200, DASHBOARD_SCRIPT, "text/javascript");
    if (route.path === "/dashboard.css") return send(res, 200, DASHBOARD_STYLE, "text/css");
    if (route.path === "/favicon.ico") return void res.writeHead(204, SECURITY_HEADERS).end();
    if (route.path === "/api/sessions") return send(res, 200, await buildSnapshot(ctx, config));
    if (route.path === "/api/events") return openStream(res);

    const body = await readBody(req);
    if (!body.ok) return send(res, body.status, { error: body.error });
    const parsed = parseControlBody(body.value);
    if (!parsed.ok) return send(res, 400, { error: parsed.error });
    const { target, level, reason, text } = parsed.body;
    const result =
      route.path === "/api/stop"
        ? await requestStop(ctx, target, { level, reason })
        : await requestInject(ctx, target, text, { maxLength: opts.maxInjectLength ?? 500 });
    if (result.ok) void push();
    if (!result.ok) return send(res, 409, { error: result.reason });
    if (!result.queued) return send(res, 200, result);
    // The Stop button says what the CLI says: begun, or not taken yet by OpenCode (issue 41 §4).
    const acks = await awaitStopAcks(ctx, result.queued, { waitMs: opts.stopAckWaitMs });
    void push();
    const said = result.queued.map((q, i) => ackLine(q, acks[i]!));
    const { queued: _files, ...answer } = result;
    const held = acks.every(stopHeld);
    return send(res, held ? 200 : 202, { ...answer, taken: held, said });
  }

  async function openStream(res: http.ServerResponse): Promise<void> {
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    res.write("retry: 1000\n\n");
    streams.add(res);
    res.on("close", () => streams.delete(res));
    res.write(`event: snapshot\ndata: ${safeJson(await buildSnapshot(ctx, config))}\n\n`);
  }

  let lastSignature = "";
  let pushing = false;
  let heartbeat = 0;
  /** Sends a fresh snapshot to every connected page. One at a time; a change during a push is caught by the next tick. */
  async function push(): Promise<void> {
    if (pushing || streams.size === 0) return;
    pushing = true;
    try {
      lastSignature = await changeSignature(ctx);
      const frame = `event: snapshot\ndata: ${safeJson(await buildSnapshot(ctx, config))}\n\n`;
      for (const s of streams) s.write(frame);
    } finally {
      pushing = false;
    }
  }
  const timer = setInterval(() => {
    if (streams.size === 0) return;
    void (async () => {
      const signature = await changeSignature(ctx);
      if (signature !== lastSignature) await push();
      else if (++heartbeat % 60 === 0) for (const s of streams) s.write(": keep-alive\n\n");
    })().catch((error: unknown) => process.stderr.write(`dashboard watch: ${error instanceof Error ? error.message : String(error)}\n`));
  }, opts.watchIntervalMs ?? 250);
  timer.unref();

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    token,
    liveConnections: () => streams.size,
    connections: gate,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
