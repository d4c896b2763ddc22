import * as z from "../../governance/zod.ts";
import { chatMessage } from "../hooks/chat-message.ts";
import { compacting } from "../hooks/compacting.ts";
import { messagesTransform } from "../hooks/messages-transform.ts";
import { systemTransform } from "../hooks/system-transform.ts";
import { toolAfter } from "../hooks/tool-after.ts";
import { toolBefore } from "../hooks/tool-before.ts";
import { contain } from "../runtime/contain.ts";
import { Runtime, type RuntimeOptions } from "../runtime/runtime.ts";
import { coreToolName, HOST_LINES } from "../../governance/host/host-lines.ts";
import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { GOVERNANCE_TOOL_DESCRIPTION, GOVERNANCE_TOOL_INPUT, governanceTools } from "../opencode-1/governance-tool.ts";
import { pumpEvents } from "./event-source.ts";
import { LocationFilter } from "./location-filter.ts";
import { createV2Api, ExecutionStates } from "./api.ts";
import type { SessionContextEvent, SessionPromptEvent, ToolAfterEvent, ToolBeforeEvent, ToolResult, V2Context } from "./types.ts";

const V2 = HOST_LINES[2];
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** What the model reads of a tool result: `content` as a string, or the text of its content parts. */
function resultText(result: ToolResult): string {
  const c = result.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof obj(p).text === "string" ? (obj(p).text as string) : "")).join("");
  return typeof result.output === "string" ? result.output : "";
}

/**
 * `legacyKindFilter` is TEST-ONLY: it puts back the filter this adapter had before issue 25 (a `context` request
 * without `kind: "primary"` is skipped), which on the release line skips every request; the coverage test proves
 * governance then reports the gap (test/host-contract/opencode-2-drifts.test.ts).
 */
export type SetupOptions = Pick<RuntimeOptions, "clock" | "timers"> & {
  legacyKindFilter?: boolean;
  /** The busy sessions a previous instance of this location saw (a reload re-creates the instance: plugin/index.ts). */
  states?: ExecutionStates;
};

/**
 * The OpenCode 2 entry (`setup(ctx)` of the default export; OpenCode 1 calls `server`). It only translates: OpenCode 2's
 * hooks and events become the SAME handlers (plugin/hooks/) and core events the OpenCode 1 adapter uses, and their
 * effects run through an HostApi over `ctx.session` (v2-api.ts). Names and limits come from host-lines.ts.
 * Every callback is contained and tracked (an exit waits for the calls under way, plugin/runtime/in-flight.ts); only a
 * deliberate block (a refused spawn, a terminated session) rejects `execute.before`, which OpenCode 2 turns into the
 * tool's error for the model.
 */
export async function setupV2(ctx: V2Context, options: SetupOptions = {}): Promise<(end?: { handover?: boolean }) => Promise<void>> {
  const directory = ctx.location?.directory;
  const states = options.states ?? new ExecutionStates();
  let rt: Runtime | undefined;
  const api = createV2Api(ctx, states, (message, variant) => void rt?.ctx.record("host_notice", { message, variant }));
  const { legacyKindFilter: _k, states: _s, ...runtimeOptions } = options;
  rt = new Runtime({ directory: directory ?? process.cwd() }, { ...runtimeOptions, api, host: { line: 2, version: ctx.app?.version ?? null } });
  const runtime = rt;
  const sink = (hook: string, error: unknown) => runtime.ctx.reportHookError(hook, error);
  try {
    await runtime.start();
    await runtime.ctx.record("host_detected", { line: 2, version: ctx.app?.version ?? null, location: directory ?? null });
    if (directory === undefined) await runtime.ctx.record("host_notice", { message: "OpenCode 2 gave no ctx.location: events are not filtered by location" });
  } catch (error) {
    sink("start", error);
  }
  const filter = new LocationFilter(directory, (input) => ctx.session.get(input));
  const mine = (sessionId: string) => filter.mine(sessionId, true);
  const tracked = <A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>) => runtime.inFlight.track(contain(hook, fn, sink));

  const registrations = await Promise.all([
    // A prompt admitted to a session: the resume window (1 h resume, 48 h fresh start) applies on the next prompt in a
    // process that stays up, as OpenCode 1's `chat.message` (issue 21).
    ctx.session.hook(
      "prompt",
      tracked("session.prompt", async (e: SessionPromptEvent) => {
        if (await mine(e.sessionID)) await chatMessage(runtime, { sessionID: e.sessionID });
      }),
    ),
    ctx.session.hook(
      "context",
      tracked("session.context", async (e: SessionContextEvent) => {
        // The release line calls `context` for the agent loop only (compaction, generate and title have hooks of their
        // own) and its payload has no `kind` (packages/core/src/session/model-request.ts @ 0330149c, 2.0.16 fork @
        // 605708ad). Pre-release builds carried `kind` on it: a request that says it is not the agent loop gets no prefix.
        const kind = options.legacyKindFilter ? (e.kind ?? "absent") : e.kind;
        if ((kind !== undefined && kind !== "primary") || !(await mine(e.sessionID))) return;
        // The OpenCode 1 messages handler on a one-message view: it learns the agent, and the texts it would add to
        // the request (post-compaction reminder, notifications) are read back from the view.
        const view = [{ info: { sessionID: e.sessionID, role: "user", agent: e.agent, id: "msg_governance_view" }, parts: [] as object[] }];
        await messagesTransform(runtime, { messages: view });
        // The status note comes back as a message of its own after the view (messages-transform.ts).
        const added = view.flatMap((m) => m.parts.map((p) => obj(p).text)).filter((t): t is string => typeof t === "string");
        const out = { system: [] as string[] };
        await systemTransform(runtime, { sessionID: e.sessionID }, out);
        // The stable prefix goes in `system`; the status note (what moves: resume context, reminder, todos, notices)
        // is one user message after the last one, as on OpenCode 1 (docs/decisions/0011): the cached prefix holds.
        for (const text of out.system) e.system.push({ type: "text", text });
        if (added.length > 0) e.messages.push(v2Message(e.messages, added.join("\n\n")));
        // Coverage: this step carried the prefix, and the status note's hook ran (the same hook on OpenCode 2).
        if (out.system.at(-1)?.startsWith(GOVERNANCE_PREFIX_HEADING)) runtime.coverage.prefixed(e.sessionID);
        runtime.coverage.noted(e.sessionID);
      }),
    ),
    ctx.session.hook(
      "compaction",
      tracked("session.compaction", async (e: SessionContextEvent) => {
        if (!(await mine(e.sessionID))) return;
        const out = { context: [] as string[] };
        await compacting(runtime, { sessionID: e.sessionID }, out);
        for (const text of out.context) e.system.push({ type: "text", text });
      }),
    ),
    ctx.tool.hook(
      "execute.before",
      tracked("tool.execute.before", async (e: ToolBeforeEvent) => {
        if (!(await mine(e.sessionID))) return;
        runtime.coverage.gated(e.sessionID, e.id);
        const input = obj(e.input);
        let tool = coreToolName(2, e.tool);
        let args: Record<string, unknown> = input;
        if (e.tool === V2.delegateTool) {
          // Continuing an existing child (`sessionID`) creates no session: not a spawn, only the stop check applies.
          if (typeof input.sessionID === "string") tool = e.tool;
          else args = { ...input, [HOST_LINES[1].delegateAgentArg]: input[V2.delegateAgentArg] };
        }
        await toolBefore(runtime, { tool, sessionID: e.sessionID, callID: e.id }, { args });
        if (args !== input && typeof args.prompt === "string") input.prompt = args.prompt;
      }),
    ),
    ctx.tool.hook(
      "execute.after",
      tracked("tool.execute.after", async (e: ToolAfterEvent) => {
        if (!(await mine(e.sessionID))) return;
        const text = e.status === "completed" ? resultText(e.result) : String(e.error?.message ?? "");
        const childId = e.status === "completed" ? obj(e.result.metadata).sessionID : /\(sessionID: ([^)\s]+)\)/.exec(text)?.[1];
        // A background child (`status: "running"`) has not ended: its link stays open (no `task` bookkeeping).
        const background = e.status === "completed" && obj(e.result.metadata).status === "running";
        const tool = background ? e.tool : coreToolName(2, e.tool);
        const out = { title: "", output: text, metadata: { sessionId: childId } as unknown };
        await toolAfter(runtime, { tool, sessionID: e.sessionID, callID: e.id }, out);
        if (tool === HOST_LINES[1].delegateTool) await runtime.coverage.reported(e.sessionID, childId);
        if (out.output === text) return;
        if (e.status === "completed") {
          e.result.content = Array.isArray(e.result.content) ? [{ type: "text", text: out.output }] : out.output;
        } else {
          e.error.message = out.output;
          if (e.error.message !== out.output)
            await runtime.ctx.record("host_notice", { message: "a tool error could not carry governance text", sessionId: e.sessionID });
        }
      }),
    ),
    ctx.tool.transform((editor) => {
      const def = governanceTools(runtime.ctx, (id) => runtime.stops.poke(id)).governance;
      if (!def) return;
      const Args = z.object(def.args as unknown as Record<string, z.ZodType>);
      editor.add({
        name: "governance",
        description: GOVERNANCE_TOOL_DESCRIPTION,
        input: GOVERNANCE_TOOL_INPUT as unknown as Record<string, unknown>,
        options: { codemode: false },
        async execute(input, context) {
          const parsed = Args.safeParse(input);
          const text = parsed.success
            ? await def.execute(parsed.data as never, { sessionID: context.sessionID, agent: context.agent } as never).catch((error: unknown) => {
                sink("governance-tool", error);
                return "Governance could not do that (see the audit log).";
              })
            : `Not done: ${z.prettifyError(parsed.error)}`;
          const content = typeof text === "string" ? text : String(obj(text).output ?? "");
          return { output: content, content };
        },
      });
    }),
  ]);

  const pump = pumpEvents(ctx, runtime, filter, states, sink);
  return async (end: { handover?: boolean } = {}) => {
    await pump.stop();
    for (const r of registrations) await r.dispose().catch(() => undefined);
    await runtime.dispose(end);
  };
}

/**
 * A user message in OpenCode 2's request shape (`LLM.Message` of packages/ai/src/schema/messages.ts @ 2b33fbee:
 * `{ role, content: ContentPart[] }`), made with the class of the request's own messages when they are instances of
 * one, so the host sees the type it built.
 */
function v2Message(messages: readonly unknown[], text: string): unknown {
  const input = { role: "user", content: [{ type: "text", text }] };
  const Ctor = (messages[0] as { constructor?: unknown } | undefined)?.constructor;
  return typeof Ctor === "function" && Ctor !== Object ? new (Ctor as new (i: typeof input) => unknown)(input) : input;
}
