import { timingSafeEqual } from "node:crypto";
import type http from "node:http";

/**
 * The checks every dashboard request passes before any route runs. The server listens on 127.0.0.1 only; these
 * stop what can still reach it through the user's browser: DNS rebinding (a hostile name resolving to 127.0.0.1
 * sends its own name as Host), cross-site requests (Origin / Sec-Fetch-Site), and anyone without the token.
 * Every malformed request is a 4xx value, never a throw.
 */
export type Refusal = { status: number; error: string; headers?: Record<string, string> };

export type Route = { method: "GET" | "POST"; path: string; auth: "none" | "query" | "header" | "query-or-header" };

export const ROUTES: readonly Route[] = [
  { method: "GET", path: "/", auth: "query" },
  { method: "GET", path: "/dashboard.js", auth: "none" },
  { method: "GET", path: "/dashboard.css", auth: "none" },
  /** Browsers ask for it on their own; answered 204 so the console stays clean. */
  { method: "GET", path: "/favicon.ico", auth: "none" },
  { method: "GET", path: "/api/sessions", auth: "header" },
  { method: "GET", path: "/api/events", auth: "query-or-header" },
  { method: "POST", path: "/api/stop", auth: "header" },
  { method: "POST", path: "/api/inject", auth: "header" },
];

const MAX_URL = 2048;

/** Constant-time compare on equal-length byte strings; a multibyte token of the right character count is just wrong. */
export function tokenMatches(given: unknown, token: string): boolean {
  if (typeof given !== "string" || given.length === 0) return false;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(token, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

export type Checked = { ok: true; route: Route; url: URL } | { ok: false; refusal: Refusal };

export function checkRequest(req: http.IncomingMessage, opts: { port: number; token: string }): Checked {
  const hosts = new Set([`127.0.0.1:${opts.port}`, `localhost:${opts.port}`]);
  const host = req.headers.host;
  if (!host) return refuse(400, "a Host header is required");
  if (!hosts.has(host.toLowerCase()))
    return refuse(421, `this dashboard answers only to http://127.0.0.1:${opts.port}, not to Host ${JSON.stringify(host.slice(0, 100))}`);
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const m = /^http:\/\/([^/]+)$/i.exec(origin);
    if (!m || !hosts.has(m[1]!.toLowerCase())) return refuse(403, "cross-origin request refused");
  }
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return refuse(403, "cross-site request refused");

  const raw = req.url ?? "";
  if (raw.length > MAX_URL) return refuse(414, "URL too long");
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) return refuse(400, "malformed request path");
  let url: URL;
  try {
    url = new URL(raw, `http://127.0.0.1:${opts.port}`);
  } catch {
    return refuse(400, "malformed request path");
  }
  if (url.host !== `127.0.0.1:${opts.port}`) return refuse(400, "malformed request path");

  const atPath = ROUTES.filter((r) => r.path === url.pathname);
  if (atPath.length === 0) return refuse(404, `no route ${url.pathname.slice(0, 100)}`);
  const route = atPath.find((r) => r.method === req.method);
  if (!route) return refuse(405, `method ${String(req.method).slice(0, 20)} not allowed on ${url.pathname}`, { allow: atPath.map((r) => r.method).join(", ") });

  if (route.auth !== "none") {
    const fromQuery = route.auth === "query" || route.auth === "query-or-header" ? url.searchParams.get("token") : null;
    const fromHeader = route.auth === "header" || route.auth === "query-or-header" ? req.headers["x-governance-token"] : undefined;
    if (!tokenMatches(fromQuery, opts.token) && !tokenMatches(fromHeader, opts.token)) {
      return refuse(403, "missing or wrong token: open the URL the dashboard printed");
    }
  }
  if (route.method === "POST") {
    const type = String(req.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    if (type !== "application/json") return refuse(415, "send the body as application/json");
  }
  return { ok: true, route, url };
}

function refuse(status: number, error: string, headers?: Record<string, string>): Checked {
  return { ok: false, refusal: { status, error, headers } };
}

/** What a Stop or Inject body must look like; anything else is a 400 with the reason. */
export type ControlBody = { target: string; level: 1 | 2 | 3; reason: string; text: string };

export function parseControlBody(body: unknown): { ok: true; body: ControlBody } | { ok: false; error: string } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return { ok: false, error: "the body must be a JSON object" };
  const b = body as Record<string, unknown>;
  if (typeof b.target !== "string" || b.target.length === 0 || b.target.length > 200)
    return { ok: false, error: "target (a session id or agent name) is required" };
  if (b.level !== undefined && b.level !== 1 && b.level !== 2 && b.level !== 3) return { ok: false, error: "level must be 1, 2 or 3" };
  if (b.reason !== undefined && typeof b.reason !== "string") return { ok: false, error: "reason must be a string" };
  if (b.text !== undefined && typeof b.text !== "string") return { ok: false, error: "text must be a string" };
  return {
    ok: true,
    body: {
      target: b.target,
      level: (b.level as 1 | 2 | 3 | undefined) ?? 1,
      reason: (b.reason as string | undefined) ?? "",
      text: (b.text as string | undefined) ?? "",
    },
  };
}
