import type { Hooks, PluginInput, PluginModule } from "@opencode-ai/plugin";
import { contain as containHook } from "./runtime/contain.ts";
import { compacting, markAutoCompaction } from "./hooks/compacting.ts";
import { chatMessage } from "./hooks/chat-message.ts";
import { configHook } from "./hooks/config.ts";
import { onEvent } from "./hooks/event.ts";
import { messagesTransform } from "./hooks/messages-transform.ts";
import { systemTransform } from "./hooks/system-transform.ts";
import { toolAfter } from "./hooks/tool-after.ts";
import { toolBefore } from "./hooks/tool-before.ts";
import { shellEnv } from "./hooks/shell-env.ts";
import { Runtime } from "./runtime/runtime.ts";
import { governanceTools } from "./host/tools.ts";
import { detectV1Host } from "./host/opencode-1/host-version.ts";
import { setupV2 } from "./host/opencode-2/setup.ts";
import type { Cleanup, V2Context } from "./host/opencode-2/v2-types.ts";

/**
 * The OpenCode 1 entry. Every hook is contained (an unexpected error is written to the audit log and the user's
 * session goes on); only deliberate blocks (a refused spawn, a terminated session) reach OpenCode.
 */
async function server(input: PluginInput): Promise<Hooks> {
  await enteredAsV1();
  const rt = new Runtime(input);
  try {
    await rt.start();
  } catch (error) {
    rt.ctx.reportHookError("start", error);
  }
  const sink = (hook: string, error: unknown) => rt.ctx.reportHookError(hook, error);
  detectV1Host(rt);
  // Every hook is contained and tracked: an exit waits for the calls under way (plugin/runtime/in-flight.ts).
  const contain: typeof containHook = (hook, fn, report) => rt.inFlight.track(containHook(hook, fn, report));
  // `timed`: the hook's duration goes to the telemetry histogram while export is on (one boolean check when off).
  const timed = <A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>) => rt.telemetry.timed(hook, contain(hook, fn, sink));
  return {
    config: contain("config", (c) => configHook(rt.ctx, c), sink),
    event: timed("event", async ({ event }) => {
      rt.telemetry.event(event, "start");
      try {
        await onEvent(rt, event);
      } finally {
        rt.telemetry.event(event, "done");
      }
    }),
    "chat.message": contain("chat.message", (i) => chatMessage(rt, i), sink),
    "experimental.chat.system.transform": timed("system.transform", (i, o) => systemTransform(rt, i, o)),
    "experimental.chat.messages.transform": timed("messages.transform", (_i, o) => messagesTransform(rt, o)),
    "experimental.session.compacting": contain(
      "session.compacting",
      (i, o) => {
        // OpenCode 1 runs the messages transform on the history it is about to summarize right after this hook.
        rt.summarizing.add(i.sessionID);
        return compacting(rt, i, o);
      },
      sink,
    ),
    "tool.execute.before": timed("tool.execute.before", (i, o) => toolBefore(rt, i, o)),
    "tool.execute.after": timed("tool.execute.after", (i, o) => toolAfter(rt, i, o)),
    "shell.env": contain("shell.env", (i, o) => shellEnv(rt, i, o), sink),
    tool: governanceTools(rt.ctx, (id) => rt.stops.poke(id)),
    "experimental.compaction.autocontinue": contain("compaction.autocontinue", (i) => markAutoCompaction(rt, i), sink),
    dispose: () => rt.dispose(),
  };
}

/**
 * Which entry this process's host uses. OpenCode 1.18 calls `setup` as well as `server` (it carries OpenCode 2's
 * module loader beside its own, a few seconds after `server`, with no `ctx.location`; seen on 1.18.33, test/e2e/
 * governance-prefix.test.ts): governance must run once, so the first `server` call wins and a V2 runtime already
 * started in this process is disposed. OpenCode 2 never calls `server`.
 */
const entry = { v1: false, v2: [] as Cleanup[] };

async function enteredAsV1(): Promise<void> {
  entry.v1 = true;
  for (const cleanup of entry.v2.splice(0)) await Promise.resolve(cleanup()).catch(() => undefined);
}

/** The OpenCode 2 entry: plugin/host/opencode-2/setup.ts. */
async function setup(ctx: V2Context): Promise<Cleanup> {
  if (entry.v1) return () => undefined;
  const cleanup = await setupV2(ctx);
  entry.v2.push(cleanup);
  return cleanup;
}

/**
 * One default export for both lines: OpenCode 1 calls `server(input)` and ignores other keys; OpenCode 2's loader
 * (packages/core/src/plugin/module.ts @ 07db2b92) accepts `{ id, setup }` and ignores `server`.
 */
const plugin: PluginModule & { id: string; setup: typeof setup } = { id: "opencode-governance", server, setup };
export default plugin;
