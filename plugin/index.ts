import type { Hooks, PluginInput, PluginModule } from "@opencode-ai/plugin";
import { contain } from "./contain.ts";
import { Governor } from "./governor.ts";
import { compacting, markAutoCompaction } from "./hooks/compacting.ts";
import { configHook } from "./hooks/config.ts";
import { onEvent } from "./hooks/event.ts";
import { messagesTransform } from "./hooks/messages-transform.ts";
import { systemTransform } from "./hooks/system-transform.ts";
import { toolAfter } from "./hooks/tool-after.ts";
import { toolBefore } from "./hooks/tool-before.ts";
import { StopController } from "./stop-controller.ts";
import { governanceTools } from "./tools.ts";
import { interruptDescendants } from "./descendants.ts";

/**
 * The OpenCode entry. Every hook is contained (an unexpected error is written to the audit log and the user's
 * session goes on); only deliberate blocks (a refused spawn, a terminated session) reach OpenCode.
 */
async function server(input: PluginInput): Promise<Hooks> {
  const gov = new Governor(input);
  const stops = new StopController(gov);
  gov.onInterrupted = (id) => interruptDescendants(gov, id);
  try {
    await gov.start();
    stops.start();
  } catch (error) {
    gov.reportHookError("start", error);
  }
  const sink = (hook: string, error: unknown) => gov.reportHookError(hook, error);
  return {
    config: contain("config", (c) => configHook(gov, c as Record<string, unknown>), sink),
    event: contain("event", ({ event }) => onEvent(gov, stops, event), sink),
    "experimental.chat.system.transform": contain("system.transform", (i, o) => systemTransform(gov, i, o), sink),
    "experimental.chat.messages.transform": contain("messages.transform", (_i, o) => messagesTransform(gov, stops, o as never), sink),
    "experimental.session.compacting": contain("session.compacting", (i, o) => compacting(gov, i, o), sink),
    "tool.execute.before": contain("tool.execute.before", (i, o) => toolBefore(gov, i, o), sink),
    "tool.execute.after": contain("tool.execute.after", (i, o) => toolAfter(gov, stops, i, o), sink),
    tool: governanceTools(gov, (id) => stops.poke(id)),
    "experimental.compaction.autocontinue": contain("compaction.autocontinue", (i) => markAutoCompaction(gov, i), sink),
    dispose: async () => {
      stops.dispose();
      gov.stopWatching();
      await gov.flush();
    },
  };
}

const plugin: PluginModule & { id: string } = { id: "opencode-governance", server };
export default plugin;
