/**
 * The few OpenCode 2 plugin-API types this adapter uses, vendored (the `@opencode/plugin` package is not on the
 * registry this project reaches, and `define` is the identity, so nothing of it is needed at run time). Copied in
 * shape, narrowed to the fields read or written, from anomalyco/opencode:
 * - packages/plugin/src/promise/plugin.ts   @ 26b15a99d6549b57b57b9a8f22e7963898030a71 (Plugin, Context, Cleanup)
 * - packages/plugin/src/promise/session.ts  @ 03545fd3bb099af708c5f1146c42c10c7f24c359 (SessionPrompt, SessionContext, SessionCompaction)
 * - packages/plugin/src/promise/tool.ts     @ 196e46122874caa1df7d28dab7a64f6fddf0730a (ToolHooks, ToolEditor)
 * - packages/plugin/src/promise/registration.ts @ baf3a6591a154eba7164fd50c8105c6f5b003658 (Hooks, Transform)
 * - packages/plugin/src/promise/event.ts    @ 31ee1d62fe1b1e1bc2a525dc6659da4fb77239a1 (subscribe: AsyncIterable)
 * - packages/schema/src/event.ts            @ 162a75f99cc10925fe2922b86940b72a49dbb60b (event envelope)
 * - packages/schema/src/session.ts          @ 06f9d1a63517d67c5fc28875294b245c93ac2507 (Session.Info)
 * - packages/schema/src/location.ts         @ 0f6c270b4c4e96ff7f978c224d704f46398b19ed (Location.Ref)
 * `ctx.location` is not in the promise Context of the source read, but every ported plugin read (docs/opencode-2.md)
 * uses `ctx.location.directory`; it is optional here and the adapter says so when it is missing.
 * The commits above are where the shapes were first read (some pre-release); what holds them now is the released
 * 2.0.15's captures (test/fixtures/opencode-2.0.15/, docs/opencode-2.md "The pinned contract").
 */

export type Registration = { readonly dispose: () => Promise<void> };

export type SystemPart = { type: "text"; text: string; [k: string]: unknown };

export type SessionRequestKind = "primary" | "compaction" | "title" | "generate";

/** `session.hook("prompt")`: a prompt admitted to a session (typed by the user, sent over HTTP, or a parent's `subagent`). */
export type SessionPromptEvent = {
  readonly sessionID: string;
  readonly messageID: string;
  prompt: unknown;
  metadata?: Record<string, unknown>;
  delivery: unknown;
};

/**
 * `session.hook("context")`: the agent loop's request about to be sent (system + messages), mutable. The release line
 * has no `kind` here (packages/core/src/session/model-request.ts @ 0330149c; @ 605708ad in the 2.0.16 fork): the host
 * calls this hook for the agent loop only. A pre-release `SessionContext` (session.ts @ 03545fd3) carried `kind`.
 */
export type SessionContextEvent = {
  readonly sessionID: string;
  readonly agent: string;
  /** The request's model and provider options (2.0.15: test/fixtures/opencode-2.0.15/hook.session.context.json); not read. */
  readonly model?: { readonly id: string; readonly providerID: string };
  readonly options?: Record<string, unknown>;
  readonly kind?: SessionRequestKind;
  system: SystemPart[];
  messages: unknown[];
  tools: Record<string, { description: string; input: unknown }>;
};

/** `session.hook("compaction")`: same shape; `result` set by a plugin skips the model call (never done here). */
export type SessionCompactionEvent = SessionContextEvent & { result?: unknown };

export type ToolBeforeEvent = {
  tool: string;
  readonly sessionID: string;
  readonly agent: string;
  readonly messageID: string;
  readonly id: string;
  input: unknown;
};

/** `Tool.Result`: what the model reads is `content` (a string or content parts); `output` is structured. */
export type ToolResult = { output?: unknown; content?: unknown; metadata?: Record<string, unknown> };

export type ToolAfterEvent = {
  readonly tool: string;
  readonly sessionID: string;
  readonly agent: string;
  readonly messageID: string;
  readonly id: string;
  readonly input: unknown;
} & ({ readonly status: "completed"; result: ToolResult } | { readonly status: "error"; error: { message?: string; [k: string]: unknown } });

/**
 * `permission.hook("evaluate")` (2.0.15, captured: test/fixtures/opencode-2.0.15/hook.permission.evaluate.json): the
 * host's rules said `allow` or `ask` (`effect`); a hook may set `effect` and `message` (the reason the model reads).
 */
export type PermissionEvaluateEvent = {
  readonly sessionID: string;
  readonly agent: string;
  readonly action: string;
  readonly resources: readonly string[];
  readonly metadata?: unknown;
  readonly source?: { readonly type: string; readonly messageID?: string; readonly id?: string };
  effect: "allow" | "ask" | "deny";
  message?: string;
};

export type ToolExecuteContext = { readonly sessionID: string; readonly agent: string; readonly messageID?: string; readonly id?: string };

export type ToolInfo = {
  name: string;
  description: string;
  /** Effect Schema, StandardSchema or JSON Schema; this adapter gives JSON Schema (a foreign zod is refused). */
  input: Record<string, unknown>;
  options?: { codemode?: boolean };
  execute: (input: unknown, context: ToolExecuteContext) => Promise<ToolResult>;
};

export type ToolEditor = { add(tool: ToolInfo): void };

/** The event envelope of `ctx.event.subscribe()`. */
export type V2Event = {
  readonly id?: string;
  readonly type: string;
  readonly data?: unknown;
  readonly location?: { readonly directory: string; readonly workspaceID?: string };
  readonly durable?: { readonly aggregateID: string };
};

export type SessionInfo = {
  readonly id: string;
  readonly parentID?: string;
  readonly agent?: string;
  /** Required in Session.Info; typed optional here because the adapter reads it defensively. */
  readonly title?: string;
  readonly location?: { readonly directory: string; readonly workspaceID?: string };
};

/**
 * `shell.hook("create.before")` (2.0.15): the shell about to be created, mutable; the host checks the agent's `shell`
 * rules on `command` after this hook and spawns `shell -c command` with `env`.
 */
export type ShellCreateEvent = { command: string; cwd: string; timeout: number; shell: string; env: Record<string, string> };

export type V2Context = {
  readonly app?: { readonly name?: string; readonly version?: string };
  readonly options?: unknown;
  /** `Location.Info` on the release line (`{ directory, workspaceID?, project }`); absent on pre-release builds. */
  readonly location?: { readonly directory: string; readonly workspaceID?: string; readonly project?: { readonly id?: string; readonly directory?: string } };
  readonly event: { subscribe(): AsyncIterable<V2Event> };
  readonly session: {
    hook(name: "prompt", cb: (e: SessionPromptEvent) => Promise<void> | void): Promise<Registration>;
    hook(name: "context", cb: (e: SessionContextEvent) => Promise<void> | void): Promise<Registration>;
    hook(name: "compaction", cb: (e: SessionCompactionEvent) => Promise<void> | void): Promise<Registration>;
    get(input: { sessionID: string }): Promise<SessionInfo>;
    /** `{ sessionID }` up to 2.0.17 and again from 2.0.22; `{ sessionID, continue? }` on about 2.0.18–2.0.21. */
    interrupt(input: { sessionID: string; continue?: boolean }): Promise<unknown>;
    synthetic(input: { sessionID: string; text: string; description?: string; resume?: boolean }): Promise<unknown>;
  };
  /** Absent on hosts before the permission hook (the double does not model it). */
  readonly permission?: {
    hook(name: "evaluate", cb: (e: PermissionEvaluateEvent) => Promise<void> | void): Promise<Registration>;
  };
  /** Absent on hosts before the shell hook (the double does not model it). */
  readonly shell?: {
    hook(name: "create.before", cb: (e: ShellCreateEvent) => Promise<void> | void): Promise<Registration>;
  };
  readonly tool: {
    hook(name: "execute.before", cb: (e: ToolBeforeEvent) => Promise<void> | void): Promise<Registration>;
    hook(name: "execute.after", cb: (e: ToolAfterEvent) => Promise<void> | void): Promise<Registration>;
    transform(cb: (editor: ToolEditor) => void): Promise<Registration>;
  };
};

export type Cleanup = () => Promise<void> | void;

/**
 * OpenCode 2's plugin entry points, named `<api>.<hook>` (`ctx.session.hook("context")` is `session.context`; the
 * event stream, `ctx.event.subscribe()`, is `event`, its name in `hook_error` as before): the keys of the adapter's job table (setup.ts).
 */
export type V2Hook =
  | "event"
  | "session.prompt"
  | "session.context"
  | "session.compaction"
  | "tool.execute.before"
  | "permission.evaluate"
  | "tool.execute.after"
  | "shell.create.before"
  | "tool.transform";
