import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { promptAdmitted } from "../hooks/prompt.ts";
import { Runtime } from "../wiring/runtime.ts";
import { testSkippedHooks } from "../runtime/test-switches.ts";
import type { AdapterOptions, HookJob } from "../wiring/host-adapter.ts";
import { HookWiring } from "../wiring/hook-wiring.ts";
import { offerGovernanceTool } from "./governance-tool.ts";
import { detectHost, hostVersion } from "./host-version.ts";
import { learnAgents } from "./host-facts.ts";
import { LocationFilter, pumpEvents } from "./event-source.ts";
import { createHostApi, ExecutionStates } from "./api.ts";
import { prepareCompaction, prepareStep } from "./model-step.ts";
import { evaluateSpawn, GatedSpawns, toolAfter, toolBefore } from "./tool-calls.ts";
import { ConfinedShells } from "./shell-confine.ts";
import type {
  PermissionEvaluateEvent,
  SessionContextEvent,
  SessionPromptEvent,
  ShellCreateEvent,
  ToolAfterEvent,
  ToolBeforeEvent,
  V2Context,
  V2Hook,
} from "./types.ts";

/** OpenCode 2's entry points by the job each does for governance (plugin/wiring/host-adapter.ts): the metric's names. */
export const JOBS = {
  // The finished text of an answer arrives on the event stream here (OpenCode 1: its own hook).
  event: ["event"],
  prompt: ["session.prompt"],
  "model.step": ["session.context"],
  compaction: ["session.compaction"],
  // The host's permission decision for a spawn is the gate's too (decision 0062).
  "tool.execute.before": ["tool.execute.before", "permission.evaluate"],
  "tool.execute.after": ["tool.execute.after"],
  shell: ["shell.create.before"],
} as const satisfies { readonly [J in HookJob]: readonly V2Hook[] };

/** OpenCode 2's entries outside the jobs, and why (plugin/wiring/host-adapter.ts `outsideJobs`). */
export const OUTSIDE_JOBS = {
  "tool.transform":
    "registers the governance tool once at start; its `execute` contains its own errors (the model reads a plain refusal, the audit log the error)",
} as const satisfies Partial<Record<V2Hook, string>>;

/**
 * `legacyKindFilter` is TEST-ONLY: it puts back the filter this adapter had before issue 25 (a `context` request
 * without `kind: "primary"` is skipped), which on the release line skips every request; the coverage test proves
 * governance then reports the gap (test/host-contract/opencode-2-drifts.test.ts).
 */
export type SetupOptions = AdapterOptions & {
  legacyKindFilter?: boolean;
  /** The busy sessions a previous instance of this location saw (a reload re-creates the instance: plugin/index.ts). */
  states?: ExecutionStates;
};

/**
 * The OpenCode 2 entry (`setup(ctx)` of the default export; OpenCode 1 calls `server`). It only translates: OpenCode 2's
 * hooks and events become the plugin's own shapes (a model step, a tool call, a tool result, a host event) for the
 * SAME host-neutral handlers (plugin/hooks/) the OpenCode 1 adapter uses, and their effects run through the host port
 * over `ctx.session` (api.ts). Names and limits come from host-lines.ts.
 * Every callback goes through the one wiring (plugin/wiring/hook-wiring.ts: contained, tracked, timed, coverage); only
 * a deliberate block (a refused spawn, a terminated session) rejects `execute.before`, which OpenCode 2 turns into the
 * tool's error for the model.
 */
export async function setupV2(ctx: V2Context, options: SetupOptions = {}): Promise<(end?: { handover?: boolean }) => Promise<void>> {
  const directory = ctx.location?.directory;
  const states = options.states ?? new ExecutionStates();
  let rt: Runtime | undefined;
  // A notice names its session, so OpenCode 2's TUI entry (plugin/tui/) can offer to open it.
  const api = createHostApi(
    ctx,
    states,
    (message, variant, sessionId) => void rt?.ctx.record("host_notice", { message, variant, ...(sessionId ? { sessionId } : {}) }),
  );
  const { legacyKindFilter: _k, states: _s, ...runtimeOptions } = options;
  rt = new Runtime({ directory: directory ?? process.cwd() }, { ...runtimeOptions, api, host: { line: 2, version: hostVersion(ctx) } });
  const runtime = rt;
  const wire = new HookWiring<V2Hook>(runtime, JOBS, (hook, error) => runtime.ctx.reportHookError(hook, error));
  try {
    await runtime.start();
    await detectHost(runtime, ctx);
    await learnAgents(runtime);
  } catch (error) {
    wire.sink("start", error);
  }
  const filter = new LocationFilter(directory, (input) => ctx.session.get(input));
  const mine = (sessionId: string) => filter.mine(sessionId, true);
  const gated = new GatedSpawns();
  // Shell calls enter the sandbox after the host's permission check where it has the shell hook (decision 0071).
  const shells = ctx.shell ? new ConfinedShells() : undefined;
  const skipped = testSkippedHooks(process.env);

  const registrations = await Promise.all([
    // A prompt admitted to a session: the resume window (1 h resume, 48 h fresh start) applies on the next prompt in a
    // process that stays up, as OpenCode 1's `chat.message` (issue 21).
    ctx.session.hook(
      "prompt",
      wire.hook("session.prompt", async (e: SessionPromptEvent) => {
        if (await mine(e.sessionID)) await promptAdmitted(runtime, e.sessionID);
      }),
    ),
    ctx.session.hook(
      "context",
      wire.hook("session.context", async (e: SessionContextEvent) =>
        (await mine(e.sessionID)) ? prepareStep(runtime, e, { legacyKindFilter: options.legacyKindFilter, skipPrefix: skipped.has("prefix") }) : undefined,
      ),
    ),
    ctx.session.hook(
      "compaction",
      wire.hook("session.compaction", async (e: SessionContextEvent) => {
        if (await mine(e.sessionID)) await prepareCompaction(runtime, e);
      }),
    ),
    skipped.has("execute.before")
      ? undefined
      : ctx.tool.hook(
          "execute.before",
          wire.hook(
            "tool.execute.before",
            async (e: ToolBeforeEvent) => {
              if (await mine(e.sessionID)) await toolBefore(runtime, e, gated, shells);
            },
            // The gate counts the call before it may refuse it.
            async (e: ToolBeforeEvent) => ((await mine(e.sessionID)) ? { sessionId: e.sessionID, gated: e.id } : undefined),
          ),
        ),
    // The host's own permission decision for a spawn, before the child session exists (decision 0062): deny only.
    ctx.permission?.hook(
      "evaluate",
      wire.hook("permission.evaluate", async (e: PermissionEvaluateEvent) => {
        if (await mine(e.sessionID)) await evaluateSpawn(runtime, gated, e);
      }),
    ),
    // Not contained: a confined call whose shell cannot be confined must not run (the host turns the throw into the
    // tool's error). Only a shell the gate remembered is touched.
    shells && !skipped.has("create.before")
      ? ctx.shell?.hook(
          "create.before",
          wire.uncontained("shell.create.before", (e: ShellCreateEvent) => shells.confine(runtime, e)),
        )
      : undefined,
    ctx.tool.hook(
      "execute.after",
      wire.hook(
        "tool.execute.after",
        async (e: ToolAfterEvent) => {
          if (!(await mine(e.sessionID))) return undefined;
          const done = await toolAfter(runtime, e);
          return done.delegated ? { sessionId: e.sessionID, delegated: { childId: done.childId } } : undefined;
        },
        // A completed shell call the gate confined at `create.before`, never passed there: it ran outside the sandbox.
        async (e: ToolAfterEvent) => {
          if (e.tool !== HOST_LINES[2].shellTool || e.status !== "completed" || !(await mine(e.sessionID))) return undefined;
          const command = (e.input as { command?: unknown } | null)?.command;
          return shells?.ranUnconfined(command) ? { sessionId: e.sessionID, unconfined: true } : undefined;
        },
      ),
    ),
    ctx.tool.transform((editor) => offerGovernanceTool(editor, runtime, wire.sink)),
  ]);

  const pump = pumpEvents(ctx, runtime, filter, states, wire);
  return async (end: { handover?: boolean } = {}) => {
    await pump.stop();
    for (const r of registrations) await r?.dispose().catch(() => undefined);
    await runtime.dispose(end);
  };
}
