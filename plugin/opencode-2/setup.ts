import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { promptAdmitted } from "../hooks/prompt.ts";
import { contain } from "../runtime/contain.ts";
import { Runtime, type RuntimeOptions } from "../wiring/runtime.ts";
import { testSkippedHooks } from "../runtime/test-switches.ts";
import { addGovernanceTool } from "./governance-tool.ts";
import { detectV2Host, hostVersion } from "./host-version.ts";
import { learnAgents } from "./host-facts.ts";
import { LocationFilter, pumpEvents } from "./event-source.ts";
import { createV2Api, ExecutionStates } from "./api.ts";
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
} from "./types.ts";

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
 * hooks and events become the plugin's own shapes (a model step, a tool call, a tool result, a host event) for the
 * SAME host-neutral handlers (plugin/hooks/) the OpenCode 1 adapter uses, and their effects run through the host port
 * over `ctx.session` (api.ts). Names and limits come from host-lines.ts.
 * Every callback is contained and tracked (an exit waits for the calls under way, plugin/runtime/in-flight.ts); only a
 * deliberate block (a refused spawn, a terminated session) rejects `execute.before`, which OpenCode 2 turns into the
 * tool's error for the model.
 */
export async function setupV2(ctx: V2Context, options: SetupOptions = {}): Promise<(end?: { handover?: boolean }) => Promise<void>> {
  const directory = ctx.location?.directory;
  const states = options.states ?? new ExecutionStates();
  let rt: Runtime | undefined;
  // A notice names its session, so OpenCode 2's TUI entry (plugin/tui/) can offer to open it.
  const api = createV2Api(
    ctx,
    states,
    (message, variant, sessionId) => void rt?.ctx.record("host_notice", { message, variant, ...(sessionId ? { sessionId } : {}) }),
  );
  const { legacyKindFilter: _k, states: _s, ...runtimeOptions } = options;
  rt = new Runtime({ directory: directory ?? process.cwd() }, { ...runtimeOptions, api, host: { line: 2, version: hostVersion(ctx) } });
  const runtime = rt;
  const sink = (hook: string, error: unknown) => runtime.ctx.reportHookError(hook, error);
  try {
    await runtime.start();
    await detectV2Host(runtime, ctx);
    await learnAgents(runtime);
  } catch (error) {
    sink("start", error);
  }
  const filter = new LocationFilter(directory, (input) => ctx.session.get(input));
  const mine = (sessionId: string) => filter.mine(sessionId, true);
  // Contained, tracked (an exit waits for the calls under way) and timed (`governance.hook.duration` while OTel export
  // is on), as OpenCode 1's hooks are.
  const tracked = <A extends unknown[]>(hook: string, fn: (...args: A) => Promise<void>) =>
    runtime.telemetry.timed(hook, runtime.inFlight.track(contain(hook, fn, sink)));
  const gated = new GatedSpawns();
  // Shell calls enter the sandbox after the host's permission check where it has the shell hook (decision 0071).
  const shells = ctx.shell ? new ConfinedShells() : undefined;
  const skipped = testSkippedHooks(process.env);

  const registrations = await Promise.all([
    // A prompt admitted to a session: the resume window (1 h resume, 48 h fresh start) applies on the next prompt in a
    // process that stays up, as OpenCode 1's `chat.message` (issue 21).
    ctx.session.hook(
      "prompt",
      tracked("session.prompt", async (e: SessionPromptEvent) => {
        if (await mine(e.sessionID)) await promptAdmitted(runtime, e.sessionID);
      }),
    ),
    ctx.session.hook(
      "context",
      tracked("session.context", async (e: SessionContextEvent) => {
        if (await mine(e.sessionID)) await prepareStep(runtime, e, { legacyKindFilter: options.legacyKindFilter, skipPrefix: skipped.has("prefix") });
      }),
    ),
    ctx.session.hook(
      "compaction",
      tracked("session.compaction", async (e: SessionContextEvent) => {
        if (await mine(e.sessionID)) await prepareCompaction(runtime, e);
      }),
    ),
    skipped.has("execute.before")
      ? undefined
      : ctx.tool.hook(
          "execute.before",
          tracked("tool.execute.before", async (e: ToolBeforeEvent) => {
            if (!(await mine(e.sessionID))) return;
            runtime.coverage.gated(e.sessionID, e.id);
            await toolBefore(runtime, e, gated, shells);
          }),
        ),
    // The host's own permission decision for a spawn, before the child session exists (decision 0062): deny only.
    ctx.permission?.hook(
      "evaluate",
      tracked("permission.evaluate", async (e: PermissionEvaluateEvent) => {
        if (await mine(e.sessionID)) await evaluateSpawn(runtime, gated, e);
      }),
    ),
    // Not contained: a confined call whose shell cannot be confined must not run (the host turns the throw into the
    // tool's error). Only a shell the gate remembered is touched.
    shells && !skipped.has("create.before") ? ctx.shell?.hook("create.before", (e: ShellCreateEvent) => shells.confine(runtime, e)) : undefined,
    ctx.tool.hook(
      "execute.after",
      tracked("tool.execute.after", async (e: ToolAfterEvent) => {
        if (!(await mine(e.sessionID))) return;
        // A completed shell call the gate confined at `create.before`, never passed there: it ran outside the sandbox.
        const command = (e.input as { command?: unknown } | null)?.command;
        if (e.tool === HOST_LINES[2].shellTool && e.status === "completed" && shells?.ranUnconfined(command)) runtime.coverage.unconfined(e.sessionID);
        const done = await toolAfter(runtime, e);
        if (done.delegated) await runtime.coverage.reported(e.sessionID, done.childId);
      }),
    ),
    ctx.tool.transform((editor) => addGovernanceTool(editor, runtime, sink)),
  ]);

  const pump = pumpEvents(ctx, runtime, filter, states, sink);
  return async (end: { handover?: boolean } = {}) => {
    await pump.stop();
    for (const r of registrations) await r?.dispose().catch(() => undefined);
    await runtime.dispose(end);
  };
}
