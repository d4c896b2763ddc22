/**
 * A thin client for OpenCode's HTTP API (the routes `opencode serve` exposes in 1.18), with the waits tests need.
 * Deliberately fetch-based and small: what the tests do must be visible here, not hidden in a generated SDK.
 */
export type SessionInfo = { id: string; parentID?: string; title?: string };
export type SessionStatus = { type: "idle" | "busy" | "retry" };

export class OpencodeHttp {
  constructor(
    readonly baseUrl: string,
    readonly directory: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(path, this.baseUrl);
    url.searchParams.set("directory", this.directory);
    const res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  createSession(body: { title?: string; parentID?: string } = {}): Promise<SessionInfo> {
    return this.call("POST", "/session", body);
  }

  /** Renames a session, as the TUI's rename does (`PATCH /session/:id`). */
  rename(id: string, title: string): Promise<SessionInfo> {
    return this.call("PATCH", `/session/${id}`, { title });
  }

  getSession(id: string): Promise<SessionInfo> {
    return this.call("GET", `/session/${id}`);
  }

  /** Sends a prompt and waits for the turn to finish (the API's synchronous route). */
  prompt(id: string, text: string, opts: { agent?: string } = {}): Promise<unknown> {
    return this.call("POST", `/session/${id}/message`, { parts: [{ type: "text", text }], ...opts });
  }

  /** Sends a prompt and returns at once. */
  promptAsync(id: string, text: string, opts: { agent?: string } = {}): Promise<unknown> {
    return this.call("POST", `/session/${id}/prompt_async`, { parts: [{ type: "text", text }], ...opts });
  }

  abort(id: string): Promise<boolean> {
    return this.call("POST", `/session/${id}/abort`);
  }

  summarize(id: string, model = { providerID: "scripted", modelID: "scripted-model" }): Promise<boolean> {
    return this.call("POST", `/session/${id}/summarize`, model);
  }

  deleteSession(id: string): Promise<boolean> {
    return this.call("DELETE", `/session/${id}`);
  }

  children(id: string): Promise<SessionInfo[]> {
    return this.call("GET", `/session/${id}/children`);
  }

  status(): Promise<Record<string, SessionStatus>> {
    return this.call("GET", "/session/status");
  }

  messages(id: string): Promise<{ info: Record<string, unknown>; parts: Record<string, unknown>[] }[]> {
    return this.call("GET", `/session/${id}/message`);
  }

  /** The permission requests waiting for the user (`GET /permission`). */
  permissions(): Promise<{ id: string; sessionID: string; permission: string; patterns: string[] }[]> {
    return this.call("GET", "/permission");
  }

  /** The user's answer to a permission request. */
  replyPermission(id: string, reply: "once" | "always" | "reject"): Promise<unknown> {
    return this.call("POST", `/permission/${id}/reply`, { reply });
  }

  /** Resolves once no listed session is busy (status map omits idle sessions in 1.18). */
  /** A new root session prompted with `text` and run until it is idle (its subagents' turns inside its own); its id. */
  async run(text: string, opts: { agent?: string; timeoutMs?: number } = {}): Promise<string> {
    const { id } = await this.createSession();
    await this.prompt(id, text, opts.agent ? { agent: opts.agent } : {});
    await this.waitIdle([id], opts.timeoutMs);
    return id;
  }

  async waitIdle(ids: string[], timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const status = await this.status();
      if (ids.every((id) => (status[id]?.type ?? "idle") === "idle")) return;
      if (Date.now() > until) throw new Error(`sessions still busy after ${timeoutMs} ms: ${JSON.stringify(status)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Polls `check` until it returns a truthy value. The default limit is generous (60 s): it returns at the first truthy
 * check, so only a failure waits that long, and two test files at once on a loaded 2-core machine (vitest.config.ts)
 * have made a step of the real opencode take over 20 s (the old default).
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 60_000, everyMs = 100): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
