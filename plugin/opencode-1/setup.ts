import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { contain as containHook } from "../runtime/contain.ts";
import { compactionContext, markAutoCompaction } from "../hooks/compacting.ts";
import { promptAdmitted } from "../hooks/prompt.ts";
import { configHook } from "./host-facts.ts";
import { onEvent } from "./event-source.ts";
import { messagesTransform, systemTransform } from "./model-step.ts";
import { toolAfter, toolBefore } from "./tool-calls.ts";
import { ConfinedCalls } from "./shell-confine.ts";
import { shellEnv } from "../hooks/shell-env.ts";
import { answered } from "../hooks/answer.ts";
import { Runtime } from "../wiring/runtime.ts";
import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { governanceTools } from "./governance-tool.ts";
import { detectV1Host } from "./host-version.ts";
import { createOpencodeApi } from "./api.ts";
import { testSkippedHooks } from "../runtime/test-switches.ts";

/**
 * The OpenCode 1 entry. Every hook is contained (an unexpected error is written to the audit log and the user's
 * session goes on); only deliberate blocks (a refused spawn, a terminated session) reach OpenCode.
 */
export async function setupV1(input: PluginInput): Promise<Hooks> {
  const rt = new Runtime({ directory: input.directory }, { api: createOpencodeApi(input.client, input.directory) });
  try {
    await rt.start();
  } catch (error) {
    rt.ctx.reportHookError("start", error);
  }
  const sink = (hook: string, error: unknown) => rt.ctx.reportHookError(hook, error);
  detectV1Host(rt);
  const skipped = testSkippedHooks(process.env);
  // Bash enters the sandbox after OpenCode's permission check, through `shell.env` (decision 0071); another shell
  // keeps the command text rewrite.
  const entries = new ConfinedCalls();
  // Every hook is contained and tracked: an exit waits for the calls under way (plugin/runtime/in-flight.ts).
  const contain: typeof containHook = (hook, fn, report) => rt.inFlight.track(containHook(hook, fn, report));
  // `timed`: the hook's duration goes to the telemetry histogram while export is on (one boolean check when off).
  const timed = <A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void> | undefined) => rt.telemetry.timed(hook, contain(hook, fn, sink));
  return {
    config: contain(
      "config",
      (c) => {
        entries.configShell = typeof (c as { shell?: unknown }).shell === "string" ? (c as { shell: string }).shell : undefined;
        return configHook(rt.ctx, c);
      },
      sink,
    ),
    event: timed("event", ({ event }) => onEvent(rt, event)),
    "chat.message": contain("chat.message", (i) => promptAdmitted(rt, i.sessionID, i.agent ?? null), sink),
    // Coverage (plugin/sessions/coverage-watch.ts): a step whose system prompt ends with the prefix carried it; a step
    // the messages transform saw could carry the status note. The test-only switch below leaves the prefix hook out.
    ...(skipped.has("prefix")
      ? {}
      : {
          "experimental.chat.system.transform": timed("system.transform", async (i, o) => {
            await systemTransform(rt, i, o);
            if (i.sessionID && o.system.at(-1)?.startsWith(GOVERNANCE_PREFIX_HEADING)) rt.coverage.prefixed(i.sessionID);
          }),
        }),
    "experimental.chat.messages.transform": timed("messages.transform", async (_i, o) => {
      await messagesTransform(rt, o);
      const id = o.messages[0]?.info.sessionID;
      if (id) rt.coverage.noted(id);
    }),
    "experimental.session.compacting": contain(
      "session.compacting",
      (i, o) => {
        // OpenCode 1 runs the messages transform on the history it is about to summarize right after this hook.
        rt.summarizing.add(i.sessionID);
        return compactionContext(rt, i.sessionID).then((lines) => void o.context.push(...lines));
      },
      sink,
    ),
    "tool.execute.before": timed("tool.execute.before", (i, o) => {
      rt.coverage.gated(i.sessionID, i.callID);
      return toolBefore(rt, i, o, entries);
    }),
    "tool.execute.after": timed("tool.execute.after", async (i, o) => {
      // A confined call whose shell `shell.env` never named ran outside the sandbox: said (`governance_gap`), and
      // every later call is confined by the command rewrite instead.
      if (i.tool === HOST_LINES[1].shellTool && entries.ranUnconfined(i.callID)) rt.coverage.unconfined(i.sessionID);
      await toolAfter(rt, i, o);
      if (i.tool === HOST_LINES[1].delegateTool) await rt.coverage.reported(i.sessionID, (o.metadata as { sessionId?: unknown } | undefined)?.sessionId);
    }),
    // The finished text of an answer's part: a subagent's last one is handed back to its parent if a stop ends it.
    "experimental.text.complete": contain("text.complete", (i, o) => answered(rt, i.sessionID, o.text), sink),
    "shell.env": contain(
      "shell.env",
      async (i, o) => {
        // The confinement first: it must not wait on (or be lost with) the marker's record read.
        // TEST-ONLY (`execute.before`'s switch, shell-env): the confinement left out, as a host that stops naming the call.
        if (!skipped.has("shell.env")) Object.assign(o.env, entries.env(i.callID));
        Object.assign(o.env, await shellEnv(rt, i.sessionID));
      },
      sink,
    ),
    tool: governanceTools(rt.ctx, (id) => rt.stops.poke(id)),
    "experimental.compaction.autocontinue": contain("compaction.autocontinue", (i) => markAutoCompaction(rt, i.sessionID), sink),
    dispose: () => rt.dispose(),
  };
}
