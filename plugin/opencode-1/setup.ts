import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { compactionContext, markAutoCompaction } from "../hooks/compacting.ts";
import { promptAdmitted } from "../hooks/prompt.ts";
import { configHook } from "./host-facts.ts";
import { onEvent } from "./event-source.ts";
import { messagesTransform, Summarizing, systemTransform } from "./model-step.ts";
import { toolAfter, toolBefore } from "./tool-calls.ts";
import { ConfinedCalls } from "./shell-confine.ts";
import { shellEnv } from "../hooks/shell-env.ts";
import { answered } from "../hooks/answer.ts";
import { Runtime } from "../wiring/runtime.ts";
import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { offerGovernanceTool } from "./governance-tool.ts";
import { detectHost } from "./host-version.ts";
import { createHostApi } from "./api.ts";
import { testSkippedHooks } from "../runtime/test-switches.ts";
import type { AdapterOptions, HookJob } from "../wiring/host-adapter.ts";
import { HookWiring } from "../wiring/hook-wiring.ts";

const V1 = HOST_LINES[1];

/** OpenCode 1's hooks by the job each does for governance (plugin/wiring/host-adapter.ts): the metric's names. */
export const JOBS = {
  // The finished text of an answer arrives as a hook here; OpenCode 2 sends it on its event stream.
  event: ["event", "experimental.text.complete"],
  prompt: ["chat.message"],
  "model.step": ["experimental.chat.system.transform", "experimental.chat.messages.transform"],
  compaction: ["experimental.session.compacting", "experimental.compaction.autocontinue"],
  "tool.execute.before": ["tool.execute.before"],
  "tool.execute.after": ["tool.execute.after"],
  shell: ["shell.env"],
} as const satisfies { readonly [J in HookJob]: readonly (keyof Hooks)[] };

/** OpenCode 1's entries outside the jobs, and why (plugin/wiring/host-adapter.ts `outsideJobs`). */
export const OUTSIDE_JOBS = {
  config: "called once at start, before any session: contained and tracked, not timed",
  tool: "the governance tool: a definition, not a hook; an error in its `execute` is the tool's error, which the model reads",
  dispose: "the end of the instance (Runtime.dispose waits for the hooks under way)",
} as const satisfies Partial<Record<keyof Hooks, string>>;

/**
 * The OpenCode 1 entry. Every hook goes through the one wiring (plugin/wiring/hook-wiring.ts: contained, tracked,
 * timed, coverage); only deliberate blocks (a refused spawn, a terminated session) reach OpenCode.
 */
export async function setupV1(input: PluginInput, options: AdapterOptions = {}): Promise<Hooks> {
  const rt = new Runtime({ directory: input.directory }, { ...options, api: createHostApi(input.client, input.directory) });
  try {
    await rt.start();
  } catch (error) {
    rt.ctx.reportHookError("start", error);
  }
  const wire = new HookWiring<keyof Hooks>(rt, JOBS, (hook, error) => rt.ctx.reportHookError(hook, error));
  detectHost(rt);
  const skipped = testSkippedHooks(process.env);
  // Bash enters the sandbox after OpenCode's permission check, through `shell.env` (decision 0071); another shell
  // keeps the command text rewrite.
  const entries = new ConfinedCalls();
  // OpenCode 1's quirk: the messages transform right after `session.compacting` is the summarizer's input.
  const summarizing = new Summarizing();
  return {
    config: wire.atStart("config", (c) => {
      entries.configShell = typeof (c as { shell?: unknown }).shell === "string" ? (c as { shell: string }).shell : undefined;
      return configHook(rt.ctx, c);
    }),
    event: wire.hook("event", ({ event }) => onEvent(rt, event, summarizing)),
    "chat.message": wire.hook("chat.message", (i) => promptAdmitted(rt, i.sessionID, i.agent ?? null)),
    // Coverage (plugin/sessions/coverage-watch.ts): a step whose system prompt ends with the prefix carried it; a step
    // the messages transform saw could carry the status note. The test-only switch below leaves the prefix hook out.
    ...(skipped.has("prefix")
      ? {}
      : {
          "experimental.chat.system.transform": wire.hook("experimental.chat.system.transform", async (i, o) => {
            await systemTransform(rt, i, o);
            return i.sessionID ? { sessionId: i.sessionID, prefixed: o.system.at(-1)?.startsWith(GOVERNANCE_PREFIX_HEADING) === true } : undefined;
          }),
        }),
    "experimental.chat.messages.transform": wire.hook("experimental.chat.messages.transform", async (_i, o) => {
      const sessionId = await messagesTransform(rt, o, summarizing);
      return sessionId ? { sessionId, noted: true } : undefined;
    }),
    "experimental.session.compacting": wire.hook("experimental.session.compacting", (i, o) => {
      summarizing.begin(i.sessionID);
      return compactionContext(rt, i.sessionID).then((lines) => void o.context.push(...lines));
    }),
    // The gate counts the call before it may refuse it.
    "tool.execute.before": wire.hook(
      "tool.execute.before",
      (i, o) => toolBefore(rt, i, o, entries),
      (i) => ({ sessionId: i.sessionID, gated: i.callID }),
    ),
    "tool.execute.after": wire.hook(
      "tool.execute.after",
      async (i, o) => {
        await toolAfter(rt, i, o);
        return i.tool === V1.delegateTool
          ? { sessionId: i.sessionID, delegated: { childId: (o.metadata as { sessionId?: unknown } | undefined)?.sessionId } }
          : undefined;
      },
      // A confined call whose shell `shell.env` never named ran outside the sandbox: said (`governance_gap`), and
      // every later call is confined by the command rewrite instead.
      (i) => (i.tool === V1.shellTool && entries.ranUnconfined(i.callID) ? { sessionId: i.sessionID, unconfined: true } : undefined),
    ),
    // The finished text of an answer's part: a subagent's last one is handed back to its parent if a stop ends it.
    "experimental.text.complete": wire.hook("experimental.text.complete", (i, o) => answered(rt, i.sessionID, o.text)),
    "shell.env": wire.hook("shell.env", async (i, o) => {
      // The confinement first: it must not wait on (or be lost with) the marker's record read.
      // TEST-ONLY (`execute.before`'s switch, shell-env): the confinement left out, as a host that stops naming the call.
      if (!skipped.has("shell.env")) Object.assign(o.env, entries.env(i.callID));
      Object.assign(o.env, await shellEnv(rt, i.sessionID));
    }),
    tool: offerGovernanceTool(rt.ctx, (id) => rt.stops.poke(id)),
    "experimental.compaction.autocontinue": wire.hook("experimental.compaction.autocontinue", (i) => markAutoCompaction(rt, i.sessionID)),
    dispose: () => rt.dispose(),
  };
}
