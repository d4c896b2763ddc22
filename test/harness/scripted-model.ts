import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted OpenAI-compatible chat-completions server (streaming SSE) on 127.0.0.1.
 *
 * Every request is recorded (headers, body, and a few derived views) so a test can assert what the model was
 * actually shown. The reply comes from the test's `respond` function; OpenCode's own housekeeping requests
 * (session title generation) are answered automatically and tagged, so scripts only see real agent steps
 * (and compaction requests, which they may want to assert on).
 */

export type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string };

export type ModelRequest = {
  index: number;
  /** OpenCode sends the session id in `x-session-id`; lets a script tell parent from child. */
  sessionId: string | undefined;
  kind: "title" | "compaction" | "agent";
  system: string;
  messages: ChatMessage[];
  tools: string[];
  body: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  receivedAt: number;
  /** When the response stream closed (finished, or the client went away — e.g. OpenCode aborted the step). */
  closedAt?: number;
};

export type ToolCallReply = { name: string; args: Record<string, unknown> };

export type Reply =
  /** `streamMs`: the text is streamed in small chunks spread over that long (a model writing a long answer). */
  | { text: string; delayMs?: number; usage?: Usage; streamMs?: number }
  | { toolCalls: ToolCallReply[]; text?: string; delayMs?: number; usage?: Usage }
  /**
   * Stream keep-alive chunks forever, until the client goes away (a model stuck in a long stream); `silent`: send the
   * first chunk, then nothing at all (a model stuck without output).
   */
  | { hang: true; silent?: boolean }
  | { httpError: number; message?: string };

/**
 * What the model reports in its final SSE chunk (OpenAI's shape). `cached_tokens` and `reasoning_tokens` go into
 * OpenAI's `prompt_tokens_details` / `completion_tokens_details`, which OpenCode reads as cache-read and reasoning
 * tokens; `total_tokens` is derived.
 */
export type Usage = { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; reasoning_tokens?: number };

/** Usage as the OpenAI chat-completions stream sends it. */
function wireUsage(u: Usage): Record<string, unknown> {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
    ...(u.reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning_tokens } } : {}),
  };
}

export type Respond = (req: ModelRequest) => Reply | Promise<Reply>;

export type ScriptedModel = {
  url: string;
  port: number;
  requests: ModelRequest[];
  /** Agent-step requests only (no title generation). */
  agentRequests(): ModelRequest[];
  setRespond(respond: Respond): void;
  /** Number of streams currently open (a hanging stream counts until the client disconnects). */
  openStreams(): number;
  close(): Promise<void>;
};

export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof p === "object" && p && "text" in p ? String((p as { text: unknown }).text) : "")).join("");
  }
  return "";
}

/** The texts of a request's tool results, in order (what the model read back from its calls). */
export function toolTexts(req: ModelRequest): string[] {
  return req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
}

/** The text of a request's first user message (its session's prompt: task prompts start with governance's block). */
export function firstUser(req: ModelRequest): string {
  return textOf(req.messages.find((m) => m.role === "user")?.content);
}

/** First line of the governance status note (governance/texts/status-note.ts), kept here so the harness stands alone. */
export const STATUS_NOTE_HEADING = "## Governance Status (opencode-governance)";

/** The governance status note, when the request ends with one (the plugin's last synthetic user message). */
export function statusNote(req: Pick<ModelRequest, "messages">): string | undefined {
  const last = req.messages.at(-1);
  const text = last?.role === "user" ? textOf(last.content) : "";
  return text.startsWith(STATUS_NOTE_HEADING) ? text : undefined;
}

/** The request's messages without the trailing governance status note: what the conversation itself holds. */
export function conversation(req: Pick<ModelRequest, "messages">): ChatMessage[] {
  return statusNote(req) === undefined ? req.messages : req.messages.slice(0, -1);
}

/**
 * The text of the last message of a given role (tool results have role `tool`). For `user`, the governance status
 * note the plugin appends after the last message is not the user speaking: it is skipped (read it with statusNote).
 */
export function lastOf(req: ModelRequest, role: string): string | undefined {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role !== role) continue;
    const text = textOf(m.content);
    if (role === "user" && i === req.messages.length - 1 && text.startsWith(STATUS_NOTE_HEADING)) continue;
    return text;
  }
  return undefined;
}

/** All user-visible text of a request, for `includes` assertions. */
export function allText(req: ModelRequest): string {
  return [req.system, ...req.messages.map((m) => textOf(m.content))].join("\n");
}

function classify(system: string, messages: ChatMessage[], tools: string[]): ModelRequest["kind"] {
  if (system.includes("You are a title generator")) return "title";
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const text = `${system}\n${textOf(lastUser?.content)}`;
  if (tools.length === 0 && /summar|continuing our conversation|compact/i.test(text)) return "compaction";
  // OpenCode 2.0.15 sends its compaction request with the agent's tools and this instruction as the last user message.
  if (/You MUST summarize the conversation above/.test(textOf(lastUser?.content))) return "compaction";
  return "agent";
}

const defaultRespond: Respond = () => ({ text: "ok" });

export async function startScriptedModel(respond: Respond = defaultRespond): Promise<ScriptedModel> {
  let current = respond;
  const requests: ModelRequest[] = [];
  let open = 0;
  let seq = 0;

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      void handle(req, res, raw).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    if (!req.url?.includes("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `scripted model: no route ${req.url}` } }));
      return;
    }
    const body = JSON.parse(raw) as Record<string, unknown>;
    const messages = (body.messages as ChatMessage[]) ?? [];
    const tools = ((body.tools as { function: { name: string } }[]) ?? []).map((t) => t.function.name);
    const system = messages
      .filter((m) => m.role === "system")
      .map((m) => textOf(m.content))
      .join("\n");
    const header = req.headers["x-session-id"];
    const request: ModelRequest = {
      index: requests.length,
      sessionId: Array.isArray(header) ? header[0] : header,
      kind: classify(system, messages, tools),
      system,
      messages,
      tools,
      body,
      headers: req.headers,
      receivedAt: Date.now(),
    };
    requests.push(request);

    const reply: Reply = request.kind === "title" ? { text: "Scripted session" } : await current(request);
    if ("httpError" in reply) {
      res.writeHead(reply.httpError, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: reply.message ?? "scripted error" } }));
      return;
    }
    open++;
    res.on("close", () => {
      open--;
      request.closedAt = Date.now();
    });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const id = `chatcmpl-${++seq}`;
    const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: Usage) =>
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        model: String(body.model ?? "scripted"),
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(usage ? { usage: wireUsage(usage) } : {}),
      })}\n\n`;

    if ("hang" in reply) {
      res.write(chunk({ role: "assistant", content: "Working" }, null));
      if (reply.silent) return;
      const timer = setInterval(() => res.write(chunk({ content: "." }, null)), 200);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    const usage = reply.usage ?? { prompt_tokens: 100, completion_tokens: 10 };
    if ("toolCalls" in reply) {
      if (reply.text) res.write(chunk({ role: "assistant", content: reply.text }, null));
      reply.toolCalls.forEach((call, i) => {
        res.write(
          chunk(
            {
              role: "assistant",
              tool_calls: [{ index: i, id: `call_${seq}_${i}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } }],
            },
            null,
          ),
        );
      });
      res.write(chunk({}, "tool_calls", usage));
    } else if (reply.streamMs) {
      const pieces = reply.text.match(/.{1,8}/gs) ?? [reply.text];
      const gap = reply.streamMs / pieces.length;
      for (const piece of pieces) {
        if (res.destroyed) return;
        res.write(chunk({ role: "assistant", content: piece }, null));
        await new Promise((r) => setTimeout(r, gap));
      }
      res.write(chunk({}, "stop", usage));
    } else {
      res.write(chunk({ role: "assistant", content: reply.text }, null));
      res.write(chunk({}, "stop", usage));
    }
    res.write("data: [DONE]\n\n");
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    agentRequests: () => requests.filter((r) => r.kind !== "title"),
    setRespond: (r) => (current = r),
    openStreams: () => open,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
