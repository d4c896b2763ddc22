import { waitFor } from "./opencode-http.ts";

/**
 * A thin client for OpenCode 2's v2 API (`opencode serve` of 2.0.15, its `/openapi.json`): every route behind HTTP
 * Basic `opencode:<OPENCODE_SERVER_PASSWORD>` (401 without), answers wrapped in `{ data }`. Only what the tests drive.
 */
export type V2Session = { id: string; parentID?: string; agent?: string; title?: string; location?: { directory: string } };
export type V2Message = { id: string; type: string; time?: { created?: number }; agent?: string; content?: V2Content[]; text?: string; outcome?: string };
export type V2Content = { type: string; id?: string; name?: string; text?: string; state?: { status: string; input?: unknown; content?: { text?: string }[] } };
export type V2Event = { id?: string; type: string; data?: Record<string, unknown>; location?: { directory: string } };

export class OpencodeV2Http {
  readonly #auth: string;

  constructor(
    readonly baseUrl: string,
    readonly directory: string,
    password: string,
  ) {
    this.#auth = `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
  }

  /** The raw answer of a route (status and text), for the tests of the server's own behaviour (auth). */
  async raw(method: string, path: string, init: { body?: unknown; auth?: boolean } = {}): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = {};
    if (init.auth !== false) headers.authorization = this.#auth;
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(new URL(path, this.baseUrl), { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    return { status: res.status, text: await res.text() };
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { status, text } = await this.raw(method, path, { body });
    if (status < 200 || status >= 300) throw new Error(`${method} ${path} → ${status}: ${text.slice(0, 500)}`);
    const parsed = text ? (JSON.parse(text) as { data?: T }) : {};
    return parsed.data as T;
  }

  /** A session in this project's location (optionally with an agent). */
  createSession(body: { agent?: string; title?: string } = {}): Promise<V2Session> {
    return this.call("POST", "/api/session", { location: { directory: this.directory }, ...body });
  }

  getSession(id: string): Promise<V2Session> {
    return this.call("GET", `/api/session/${id}`);
  }

  /** The sessions whose parent is `id` (the children a `subagent` call created). */
  children(id: string): Promise<V2Session[]> {
    return this.call("GET", `/api/session?parentID=${encodeURIComponent(id)}&directory=${encodeURIComponent(this.directory)}`);
  }

  /** Admits a prompt, then waits for the turn it starts to end (the idle marker). */
  async run(id: string, text: string, timeoutMs = 60_000): Promise<V2Message> {
    const since = Date.now() - 5;
    await this.prompt(id, text);
    return this.waitIdle(id, since, timeoutMs);
  }

  /** Admits a prompt; the server answers with the user message at once and runs the turn. */
  prompt(id: string, text: string): Promise<unknown> {
    return this.call("POST", `/api/session/${id}/prompt`, { text });
  }

  /** `session.interrupt` (the TUI's Escape; its double Escape sends `resume=true`). */
  interrupt(id: string, resume?: boolean): Promise<unknown> {
    return this.call("POST", `/api/session/${id}/interrupt${resume === undefined ? "" : `?resume=${resume}`}`);
  }

  /** The session's messages, newest first (the v2 API's default order). */
  messages(id: string): Promise<V2Message[]> {
    return this.call("GET", `/api/session/${id}/message?limit=200`);
  }

  /** The plugins loaded for this location (`[]` until the location booted: after the first session request). */
  plugins(): Promise<{ id: string; source: { type: string; path?: string }; state: { status: string } }[]> {
    return this.call("GET", `/api/plugin?directory=${encodeURIComponent(this.directory)}`);
  }

  /**
   * Until the session's turn ended: the newest message is the host's `idle` marker (outcome succeeded / interrupted /
   * failed) written at or after `since` (epoch ms: a marker of an earlier turn does not count).
   */
  async waitIdle(id: string, since: number, timeoutMs = 60_000): Promise<V2Message> {
    return waitFor(
      async () => {
        const [newest] = await this.messages(id);
        return newest?.type === "idle" && (newest.time?.created ?? 0) >= since ? newest : undefined;
      },
      `session ${id} idle`,
      timeoutMs,
    );
  }

  /**
   * The server's event stream (`GET /api/event`, SSE) collected as it arrives; `close()` ends it. The tests read the
   * payloads 2.0.15 sends here (scripts/capture-opencode-2.ts keeps them as fixtures).
   */
  events(): { events: V2Event[]; ready: Promise<void>; close(): void } {
    const events: V2Event[] = [];
    const abort = new AbortController();
    let opened!: () => void;
    const ready = new Promise<void>((resolve) => (opened = resolve));
    void (async () => {
      try {
        const res = await fetch(new URL("/api/event", this.baseUrl), { headers: { authorization: this.#auth }, signal: abort.signal });
        opened();
        const decoder = new TextDecoder();
        let buffer = "";
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut = buffer.indexOf("\n\n");
          while (cut >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const data = block
              .split("\n")
              .filter((l) => l.startsWith("data:"))
              .map((l) => l.slice(5).trim())
              .join("\n");
            if (data) {
              try {
                events.push(JSON.parse(data) as V2Event);
              } catch {
                // A keep-alive or a partial line: not an event.
              }
            }
            cut = buffer.indexOf("\n\n");
          }
        }
      } catch {
        opened();
      }
    })();
    return { events, ready, close: () => abort.abort() };
  }
}

/** The tool calls of a session's messages, oldest first: name, call id, status, and what the model read. */
export function toolCallsOf(messages: V2Message[]): { name: string; id: string; status: string; text: string }[] {
  return [...messages]
    .reverse()
    .flatMap((m) => m.content ?? [])
    .filter((c) => c.type === "tool")
    .map((c) => ({
      name: c.name ?? "",
      id: c.id ?? "",
      status: c.state?.status ?? "",
      text: (c.state?.content ?? []).map((p) => p.text ?? "").join(""),
    }));
}
