import { randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { isRunning, requestInject, requestStop, type ControlContext } from "../governance/stop/control-requests.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { DASHBOARD_PAGE } from "./dashboard-page.ts";

/**
 * The local web dashboard: the session tree with Stop and Inject controls, writing the same requests as the CLI.
 *
 * It listens on 127.0.0.1 only, and every request must carry a random token (in the URL it prints, then in a header
 * for the API), so another web page open in the user's browser cannot stop or steer their agents (no CSRF, no DNS
 * rebinding: a page on another origin never learns the token).
 */
export type Dashboard = { url: string; token: string; close(): Promise<void> };

const MAX_BODY = 16 * 1024;

/** A request the client got wrong (answered 400, not 500). */
class BadRequest extends Error {}

type SessionView = Pick<SessionRecord, "sessionId" | "parentId" | "agent" | "depth" | "state" | "control" | "lastActivityAt" | "lastToolCall"> & {
  running: boolean;
};

function view(r: SessionRecord): SessionView {
  const { sessionId, parentId, agent, depth, state, control, lastActivityAt, lastToolCall } = r;
  return { sessionId, parentId, agent, depth, state, control, lastActivityAt, lastToolCall, running: isRunning(r) };
}

function send(res: http.ServerResponse, status: number, body: unknown, type = "application/json"): void {
  const text = type === "application/json" ? JSON.stringify(body) : String(body);
  res.writeHead(status, {
    "content-type": `${type}; charset=utf-8`,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
  });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new BadRequest("request body too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
      } catch {
        reject(new BadRequest("request body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

function tokenMatches(given: string | null | undefined, token: string): boolean {
  if (!given || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

export async function startDashboard(ctx: ControlContext, opts: { port?: number; maxInjectLength?: number } = {}): Promise<Dashboard> {
  const token = randomBytes(18).toString("base64url");
  const server = http.createServer((req, res) => {
    void handle(req, res).catch((error: unknown) =>
      send(res, error instanceof BadRequest ? 400 : 500, { error: error instanceof Error ? error.message : String(error) }),
    );
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const given = url.pathname === "/" ? url.searchParams.get("token") : (req.headers["x-governance-token"] as string | undefined);
    if (!tokenMatches(given, token)) return send(res, 403, { error: "missing or wrong token: open the URL the dashboard printed" });

    if (req.method === "GET" && url.pathname === "/") return send(res, 200, DASHBOARD_PAGE, "text/html");
    if (req.method === "GET" && url.pathname === "/api/sessions") {
      const records = await ctx.store.list();
      return send(res, 200, { now: ctx.clock.now(), sessions: records.map(view) });
    }
    if (req.method === "POST" && (url.pathname === "/api/stop" || url.pathname === "/api/inject")) {
      const body = (await readBody(req)) as { target?: unknown; level?: unknown; reason?: unknown; text?: unknown };
      if (typeof body.target !== "string") return send(res, 400, { error: "target (a session id or agent name) is required" });
      const result =
        url.pathname === "/api/stop"
          ? await requestStop(ctx, body.target, {
              level: body.level === 2 || body.level === 3 ? body.level : 1,
              reason: typeof body.reason === "string" ? body.reason : "",
            })
          : await requestInject(ctx, body.target, typeof body.text === "string" ? body.text : "", { maxLength: opts.maxInjectLength ?? 500 });
      return result.ok ? send(res, 200, result) : send(res, 409, { error: result.reason });
    }
    return send(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  }

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    token,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
