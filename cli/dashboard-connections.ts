import type http from "node:http";
import type net from "node:net";

/**
 * Bounds on the dashboard's connections before the token is checked (issue 28 §4). Anything on the machine can open
 * a TCP connection to 127.0.0.1 and send nothing; without bounds about a thousand such sockets exhaust the process's
 * file descriptors (`ulimit -n` 1024) and the user's own request is reset. So:
 *
 * - a connection that has not yet sent a request carrying the token is *unproven*; it may sit idle at most
 *   `idleMs` (default 10 s), then it is closed; headers must arrive within `headersMs` (default 10 s);
 * - at most `maxUnproven` (default 64) idle unproven connections are kept: a new one beyond that closes the one idle
 *   longest. A connection whose request is being answered is never closed for this, so the user's request is served
 *   however many idle sockets are open;
 * - a connection whose request carried the token is proven: no idle timeout (the page's event stream stays open;
 *   Node's keep-alive timeout still ends an idle keep-alive connection between requests).
 */
export type ConnectionBounds = { maxUnproven: number; idleMs: number; headersMs: number };
export const DEFAULT_CONNECTION_BOUNDS: ConnectionBounds = { maxUnproven: 64, idleMs: 10_000, headersMs: 10_000 };

export class ConnectionGate {
  readonly #bounds: ConnectionBounds;
  /** Idle unproven connections, oldest first (a Set keeps insertion order). */
  readonly #idle = new Set<net.Socket>();
  readonly #proven = new WeakSet<net.Socket>();
  #closedForBounds = 0;

  constructor(server: http.Server, bounds: Partial<ConnectionBounds> = {}) {
    this.#bounds = { ...DEFAULT_CONNECTION_BOUNDS, ...bounds };
    server.headersTimeout = this.#bounds.headersMs;
    server.requestTimeout = Math.max(this.#bounds.headersMs, 30_000);
    server.on("connection", (socket: net.Socket) => this.#opened(socket));
    server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
      const socket = req.socket;
      this.#idle.delete(socket);
      res.on("finish", () => this.#idleAgain(socket));
    });
  }

  /** How many connections were closed for being idle or over the cap (for tests and the terminal). */
  get closedForBounds(): number {
    return this.#closedForBounds;
  }

  get idleUnproven(): number {
    return this.#idle.size;
  }

  /** The request on this socket carried the token: it is the user's, no longer bounded. */
  prove(socket: net.Socket): void {
    this.#proven.add(socket);
    this.#idle.delete(socket);
    socket.setTimeout(0);
  }

  #opened(socket: net.Socket): void {
    socket.setTimeout(this.#bounds.idleMs, () => {
      if (this.#proven.has(socket)) return;
      this.#closedForBounds++;
      socket.destroy();
    });
    socket.once("close", () => this.#idle.delete(socket));
    this.#idleAgain(socket);
  }

  #idleAgain(socket: net.Socket): void {
    if (this.#proven.has(socket) || socket.destroyed) return;
    this.#idle.delete(socket);
    this.#idle.add(socket);
    while (this.#idle.size > this.#bounds.maxUnproven) {
      const oldest = this.#idle.values().next().value as net.Socket;
      this.#idle.delete(oldest);
      this.#closedForBounds++;
      oldest.destroy();
    }
  }
}
