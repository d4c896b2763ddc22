/**
 * A host double of OpenCode 2's PLUGIN CONTRACT, as pinned in docs/opencode-2.md: every event it emits is replayed
 * from the real 2.0.15's capture (v2-captures.ts), its hook inputs are checked against the captured ones
 * (opencode-2-captures.test.ts); what it does (loader, depth limit, cascade) was first read from upstream sources. It is not OpenCode 2: it implements what the plugin can observe of it, so a test against it proves
 * the adapter against the contract, not against the host.
 *
 * - Loader: packages/core/src/plugin/module.ts — the shape check in opencode-2-loader.ts.
 * - One plugin instance per location; `event.subscribe()` is ONE global stream every instance sees
 *   (opencode-2-event-stream.ts).
 * - `session.hook` / `tool.hook` callbacks run in registration order, awaited; a throw in `execute.before` rejects
 *   the call (the tool does not run, its error is the thrown message); `execute.after` cannot fail.
 * - Events: `{ id, type, created, data, durable: { aggregateID }, location? }`; `session.created` carries
 *   `data.location`; `session.execution.started | succeeded | failed | interrupted(reason)` carry no location;
 *   `session.idle` / `session.status` are never emitted.
 * - The `subagent` tool (packages/core/src/tool/plugin/subagent.ts @ 03cce408): depth limit
 *   `experimental.subagent_depth` (default 1) with its error text, child created with `parentID`, result
 *   `<subagent sessionID=… state="completed">`, cancelled child → error "Subagent cancelled (sessionID: …)".
 * - `session.interrupt` ends a running execution with `session.execution.interrupted` reason `user`.
 * - Release line (docs/opencode-2.md, "The pinned contract"): the `context` payload has NO `kind` (the host calls it for
 *   the agent loop only; compaction has its own hook, title and generate too) — packages/core/src/session/
 *   model-request.ts @ 0330149c (upstream, `@opencode/*`) and @ 605708ad (521ox fork, 2.0.16). Each model step is
 *   announced by `session.step.started`; each finished tool call by `session.tool.success | failed` (`id`, as captured from 2.0.15)
 *   (packages/schema/src/session-event.ts @ 03130971). `interrupted.reason` may be `inactivity` (the host's idle
 *   timeout; release line, not in the 03130971 literal list).
 *
 * Variants (`OpenCode2Double` options), each run by the scenario table:
 * - `contextKind: "present"` — a pre-release build whose `context` payload carries `kind: "primary"`.
 * - `interruptInput`: `"plain"` — `{ sessionID }` and extra keys ignored (an Effect Schema struct's default);
 *   `"continue"` — about 2.0.18–2.0.21: `{ sessionID, continue? }`, and an interrupt without `continue: false` sets the
 *   session's queued prompt running (the behaviour plugins guard against, ByBrawe/opencode-goal CHANGELOG 1.3.41–44);
 *   `"strict"` — `{ sessionID }` with unknown keys REFUSED (a worst case for 2.0.22+, whose schema is unverified).
 */
import type {
  Cleanup,
  SessionContextEvent,
  SessionPromptEvent,
  SystemPart,
  ToolAfterEvent,
  ToolBeforeEvent,
  ToolInfo,
  ToolResult,
  V2Context,
  V2Event,
} from "../../plugin/opencode-2/types.ts";
import { EventStream } from "./opencode-2-event-stream.ts";
import { checkPluginModule } from "./opencode-2-loader.ts";
import { replayEvent } from "./v2-captures.ts";

export { checkPluginModule, LOAD_ERROR, PluginLoadError } from "./opencode-2-loader.ts";

/** OpenCode 2's `LLM.Message` (a Schema.Class there): what a context hook receives and must add in kind. */
class LlmMessage {
  readonly role: string;
  readonly content: { type: string; text: string }[];
  constructor(input: { role: string; content: { type: string; text: string }[] }) {
    this.role = input.role;
    this.content = input.content;
  }
}

type Session = { id: string; parentID?: string; agent: string; directory: string; running: boolean; background?: boolean };
type Instance = {
  directory: string;
  prompt: ((e: SessionPromptEvent) => Promise<void> | void)[];
  context: ((e: SessionContextEvent) => Promise<void> | void)[];
  compaction: ((e: SessionContextEvent) => Promise<void> | void)[];
  before: ((e: ToolBeforeEvent) => Promise<void> | void)[];
  after: ((e: ToolAfterEvent) => Promise<void> | void)[];
  tools: Map<string, ToolInfo>;
  cleanup?: Cleanup | undefined;
};

export type ToolCallResult = { status: "completed"; text: string; result: ToolResult } | { status: "error"; text: string };

let seq = 0;
const nextId = (prefix: string) => `${prefix}_${(++seq).toString().padStart(4, "0")}${"x".repeat(22)}`;

export type DoubleOptions = { contextKind?: "absent" | "present"; interruptInput?: "plain" | "continue" | "strict" };
export type InterruptReason = "user" | "shutdown" | "superseded" | "inactivity";

export class OpenCode2Double {
  readonly options: Required<DoubleOptions>;
  /** Calls of `session.interrupt` as the plugin made them (the input object). */
  readonly interruptCalls: Record<string, unknown>[] = [];
  /** Prompts waiting behind a session's running turn (`delivery: "queue"`), and the ones the host set running. */
  readonly queued = new Map<string, string[]>();
  readonly ranQueued: string[] = [];

  constructor(options: DoubleOptions = {}) {
    this.options = { contextKind: options.contextKind ?? "absent", interruptInput: options.interruptInput ?? "plain" };
  }

  readonly sessions = new Map<string, Session>();
  readonly instances = new Map<string, Instance>();
  readonly interrupts: string[] = [];
  readonly emitted: V2Event[] = [];
  readonly synthetic: { sessionID: string; text: string }[] = [];
  readonly config = { experimental: { subagent_depth: 1 } };
  /**
   * Agents whose permissions deny `subagent`: the host leaves the tool out of their requests' `tools` (subagent.ts's own
   * `context` hook returns early when `event.tools.subagent` is absent; the agent's permission decides).
   */
  readonly noSubagentFor = new Set<string>();
  readonly #stream = new EventStream();

  /** Loads the module for a location (one instance per location), as the host does at start. */
  async load(mod: unknown, directory: string, version = "2.0.17"): Promise<void> {
    const def = checkPluginModule(mod);
    const inst: Instance = { directory, prompt: [], context: [], compaction: [], before: [], after: [], tools: new Map() };
    this.instances.set(directory, inst);
    const reg = { dispose: async () => undefined };
    const ctx: V2Context = {
      app: { name: "opencode", version },
      options: {},
      location: { directory },
      event: { subscribe: () => this.#stream.subscribe() },
      session: {
        hook: (async (name: "prompt" | "context" | "compaction", cb: never) => {
          inst[name].push(cb);
          return reg;
        }) as V2Context["session"]["hook"],
        get: async ({ sessionID }) => {
          const s = this.sessions.get(sessionID);
          if (!s) throw Object.assign(new Error(`Session not found: ${sessionID}`), { _tag: "Session.NotFoundError" });
          return { id: s.id, ...(s.parentID ? { parentID: s.parentID } : {}), agent: s.agent, location: { directory: s.directory } };
        },
        interrupt: async (input) => {
          this.interruptCalls.push({ ...input });
          const extra = Object.keys(input).filter((k) => k !== "sessionID" && !(k === "continue" && this.options.interruptInput === "continue"));
          if (this.options.interruptInput === "strict" && extra.length > 0)
            throw Object.assign(new Error(`Unexpected key(s) ${extra.join(", ")} in session.interrupt input`), { _tag: "SchemaError" });
          const { sessionID } = input;
          this.interrupts.push(sessionID);
          this.interrupt(sessionID, "user");
          // 2.0.18–2.0.21: the session's next queued prompt starts unless the caller said `continue: false`.
          if (this.options.interruptInput === "continue" && input.continue !== false) this.#runQueued(sessionID);
        },
        synthetic: async ({ sessionID, text }) => {
          this.synthetic.push({ sessionID, text });
        },
      },
      tool: {
        hook: (async (name: "execute.before" | "execute.after", cb: never) => {
          (name === "execute.before" ? inst.before : inst.after).push(cb);
          return reg;
        }) as V2Context["tool"]["hook"],
        transform: async (cb) => {
          cb({ add: (t) => inst.tools.set(t.name, t) });
          return reg;
        },
      },
    };
    inst.cleanup = (await def.setup(ctx)) as Cleanup | undefined;
  }

  async unload(): Promise<void> {
    for (const inst of this.instances.values()) await inst.cleanup?.();
  }

  /**
   * `opencode reload` (2.0.7) / `location.shutdown`: the location's plugin instance is destroyed (its cleanup awaited)
   * and a new one created IN THE SAME PROCESS from the same module (oceanus changelog 2.0.6/2.0.7; the 2.0.16 OpenAPI
   * `location.reload`: "Shut down and rebuild every loaded location … running sessions continue").
   */
  async reload(mod: unknown, directory: string, version = "2.0.17"): Promise<void> {
    await this.instances.get(directory)?.cleanup?.();
    await this.load(mod, directory, version);
  }

  /** Open event subscriptions (one per live plugin runtime reading the stream). */
  get subscriptions(): number {
    return this.#stream.size;
  }

  /** Every instance has taken every event emitted so far off its stream and handled it (the pump awaits each). */
  async drain(): Promise<void> {
    for (let i = 0; i < 1_000; i++) {
      await new Promise<void>((r) => setTimeout(r, 2));
      if (this.#stream.allIdle()) return;
    }
    throw new Error("the plugin did not take its events off the stream within 2 s");
  }

  /** An event as 2.0.15 sends it, replayed from its capture with the double's values (v2-captures.ts). */
  #emit(type: string, sessionID: string, data: Record<string, unknown>, variant?: string): void {
    const e = replayEvent(type, sessionID, data, this.sessions.get(sessionID)?.directory, variant);
    this.emitted.push(e);
    this.#stream.publish(e);
  }

  #instanceOf(sessionID: string): Instance {
    const s = this.sessions.get(sessionID);
    const inst = s && this.instances.get(s.directory);
    if (!inst) throw new Error(`no plugin instance for ${sessionID}`);
    return inst;
  }

  createSession(opts: { directory: string; agent: string; parentID?: string; title?: string }): string {
    const id = nextId("ses");
    this.sessions.set(id, { id, agent: opts.agent, directory: opts.directory, running: false, ...(opts.parentID ? { parentID: opts.parentID } : {}) });
    // A child's `session.created` names its parent, agent and title (2.0.15); a root's names none of them.
    const child = opts.parentID ? { parentID: opts.parentID, agent: opts.agent, title: opts.title ?? opts.agent } : {};
    this.#emit("session.created", id, { ...child, location: { directory: opts.directory } }, opts.parentID ? "child" : undefined);
    return id;
  }

  startExecution(sessionID: string): void {
    const s = this.sessions.get(sessionID);
    if (s) s.running = true;
    this.#emit("session.execution.started", sessionID, {});
  }

  succeed(sessionID: string): void {
    const s = this.sessions.get(sessionID);
    if (s) s.running = false;
    this.#emit("session.execution.succeeded", sessionID, {});
  }

  /** A prompt queued behind the session's running turn. */
  queue(sessionID: string, text: string): void {
    this.queued.set(sessionID, [...(this.queued.get(sessionID) ?? []), text]);
  }

  #runQueued(sessionID: string): void {
    const next = this.queued.get(sessionID)?.shift();
    if (next === undefined) return;
    this.ranQueued.push(next);
    this.startExecution(sessionID);
  }

  /**
   * Escape (`user`), a shutdown, a superseding prompt or the host's idle timeout (`inactivity`): the running execution
   * ends with that reason.
   */
  interrupt(sessionID: string, reason: InterruptReason): void {
    const s = this.sessions.get(sessionID);
    if (!s?.running) return;
    s.running = false;
    this.#emit("session.execution.interrupted", sessionID, { reason });
    this.children.get(sessionID)?.("cancelled");
    // A foreground child is interrupted when its parent's tool call is (subagent.ts Effect.onInterrupt); a background
    // child runs on.
    for (const child of this.sessions.values()) if (child.parentID === sessionID && child.running && !child.background) this.interrupt(child.id, reason);
  }

  /** The session's running totals after a step (2.0.15 `SessionProjector.publishUsage`; cost 0 without prices). */
  usage(sessionID: string, totals: { cost: number; input: number; output: number; reasoning?: number; cacheRead?: number; cacheWrite?: number }): void {
    const { cost, input, output, reasoning = 0, cacheRead = 0, cacheWrite = 0 } = totals;
    this.#emit("session.usage.updated", sessionID, { cost, tokens: { input, output, reasoning, cache: { read: cacheRead, write: cacheWrite } } });
  }

  compactionEnded(sessionID: string, reason: "auto" | "manual"): void {
    this.#emit("session.compaction.ended", sessionID, { reason, text: "summary", recent: "" });
  }

  /**
   * A prompt admitted to a session (the user typing, `session.prompt`, a parent's `subagent`): the `prompt` hooks,
   * awaited in order, before the execution starts.
   */
  async prompt(sessionID: string, text = "the user's prompt"): Promise<void> {
    const inst = this.#instanceOf(sessionID);
    const event: SessionPromptEvent = { sessionID, messageID: nextId("msg"), prompt: { text }, delivery: "immediate" };
    for (const cb of inst.prompt) await cb(event);
  }

  /**
   * One model request of a session; what the provider would receive. The agent loop (`primary`, the default) is one
   * model step: `session.step.started`, then the `context` hooks, awaited in order, with NO `kind` in the payload
   * (release line) or `kind: "primary"` (the `contextKind: "present"` variant). `compaction` runs the compaction hooks;
   * `title` and `generate` run hooks of their own, which this plugin does not register.
   */
  async request(
    sessionID: string,
    kind: "primary" | "compaction" | "title" | "generate" = "primary",
  ): Promise<{ system: string[]; messages: { role: string; text: string }[]; tools: string[] }> {
    const inst = this.#instanceOf(sessionID);
    const s = this.sessions.get(sessionID) as Session;
    const system: SystemPart[] = [{ type: "text", text: "You are OpenCode." }];
    // The history as OpenCode 2 hands it over: `LLM.Message` instances ({ role, content: ContentPart[] }).
    const messages: unknown[] = [new LlmMessage({ role: "user", content: [{ type: "text", text: "the user's prompt" }] })];
    const withKind = this.options.contextKind === "present" ? { kind } : {};
    // The tools this request offers the agent (model-request.ts @ 605708ad: the request's tools are the entries of the
    // hook's `tools` afterwards; an entry a hook removed is not offered): the host's own and the plugins' (`tool.transform`).
    const offered: SessionContextEvent["tools"] = { shell: { description: "Run a command", input: {} } };
    if (!this.noSubagentFor.has(s.agent)) offered.subagent = { description: "Spawns an agent in a child session", input: {} };
    for (const [name, t] of inst.tools) offered[name] = { description: t.description, input: t.input };
    const event: SessionContextEvent = {
      sessionID,
      model: { id: "m", providerID: "p" },
      agent: s.agent,
      ...withKind,
      system,
      messages,
      options: {},
      tools: offered,
    };
    if (kind === "primary")
      this.#emit("session.step.started", sessionID, { assistantMessageID: nextId("msg"), agent: s.agent, model: { id: "m", providerID: "p" } });
    const hooks = kind === "compaction" ? inst.compaction : kind === "primary" ? inst.context : [];
    for (const cb of hooks) await cb(event);
    const texts = (m: unknown) => {
      if (!(m instanceof LlmMessage)) throw new Error("a context hook added a message that is not an LLM.Message");
      return { role: m.role, text: m.content.map((p) => p.text).join("") };
    };
    return { system: event.system.map((p) => p.text), messages: event.messages.map(texts), tools: Object.keys(event.tools) };
  }

  /**
   * One tool call: `execute.before` hooks (a throw rejects the call: the tool never runs, the thrown message is its
   * error), the tool, then `execute.after` hooks with the result; what the model reads.
   */
  async callTool(sessionID: string, tool: string, input: Record<string, unknown>, run?: () => ToolResult | Promise<ToolResult>): Promise<ToolCallResult> {
    const inst = this.#instanceOf(sessionID);
    const s = this.sessions.get(sessionID) as Session;
    const id = nextId("call");
    const before: ToolBeforeEvent = { tool, sessionID, agent: s.agent, messageID: nextId("msg"), id, input };
    try {
      for (const cb of inst.before) await cb(before);
    } catch (error) {
      return { status: "error", text: error instanceof Error ? error.message : String(error) };
    }
    let outcome: { status: "completed"; result: ToolResult } | { status: "error"; error: { message: string } };
    try {
      const result =
        tool === "subagent" ? await this.#subagent(sessionID, before.input as Record<string, unknown>) : run ? await run() : await this.#plugin(inst, before);
      outcome = { status: "completed", result };
    } catch (error) {
      outcome = { status: "error", error: { message: error instanceof Error ? error.message : String(error) } };
    }
    const after = { tool, sessionID, agent: s.agent, messageID: before.messageID, id, input: before.input, ...outcome } as ToolAfterEvent;
    for (const cb of inst.after) {
      try {
        await cb(after);
      } catch {
        // execute.after cannot fail: the host ignores it.
      }
    }
    // The host reports the finished call (packages/schema/src/session-event.ts: `session.tool.success | failed`).
    this.#emit(after.status === "completed" ? "session.tool.success" : "session.tool.failed", sessionID, {
      assistantMessageID: before.messageID,
      id,
      executed: true,
    });
    if (after.status === "completed") {
      const c = after.result.content;
      return { status: "completed", text: typeof c === "string" ? c : JSON.stringify(c), result: after.result };
    }
    return { status: "error", text: String(after.error.message) };
  }

  async #plugin(inst: Instance, e: ToolBeforeEvent): Promise<ToolResult> {
    const t = inst.tools.get(e.tool);
    if (!t) return { content: `ran ${e.tool}` };
    return t.execute(e.input, { sessionID: e.sessionID, agent: e.agent });
  }

  /** The pending foreground children: the test decides how each ends. */
  readonly children = new Map<string, (end: "completed" | "cancelled") => void>();
  /** Created children, in order. */
  readonly spawned: string[] = [];

  async #subagent(parentID: string, input: Record<string, unknown>): Promise<ToolResult> {
    let depth = 0;
    for (let cur = this.sessions.get(parentID); cur?.parentID; cur = this.sessions.get(cur.parentID)) depth++;
    const limit = this.config.experimental.subagent_depth;
    if (depth >= limit) throw new Error(`Subagent depth limit reached (${limit}). Increase "experimental.subagent_depth" to allow nested subagents.`);
    const parent = this.sessions.get(parentID) as Session;
    const child = this.createSession({ directory: parent.directory, agent: String(input.agent), parentID, title: String(input.description ?? "") });
    this.spawned.push(child);
    await this.prompt(child, String(input.prompt));
    this.startExecution(child);
    if (input.background === true) {
      (this.sessions.get(child) as Session).background = true;
      return {
        output: { sessionID: child, status: "running" },
        content: `The subagent is working in the background (sessionID: ${child}).`,
        metadata: { sessionID: child, status: "running" },
      };
    }
    const end = await new Promise<"completed" | "cancelled">((resolve) => this.children.set(child, resolve));
    this.children.delete(child);
    if (end === "cancelled") throw new Error(`Subagent cancelled (sessionID: ${child})`);
    this.succeed(child);
    return {
      output: { sessionID: child, status: "completed" },
      content: `<subagent sessionID="${child}" state="completed">\ndone\n</subagent>`,
      metadata: { sessionID: child, status: "completed" },
    };
  }

  /** Plugin tools the instance of `directory` registered. */
  tools(directory: string): Map<string, ToolInfo> {
    return this.instances.get(directory)?.tools ?? new Map();
  }
}
