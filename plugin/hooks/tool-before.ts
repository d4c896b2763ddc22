import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import { onToolBefore } from "../../governance/stop/stop-ladder.ts";
import { type SurfaceHit, surfaceNamed, surfaceRefusal } from "../../governance/stop/control-surface.ts";
import { stopOrigin } from "../../governance/session/stop-origin.ts";
import { buildStopDirective } from "../../governance/texts/stop-directives.ts";
import { enrichTaskPrompt } from "../../governance/texts/task-context-block.ts";
import { toolCallSummary } from "../../governance/session/tool-call-summary.ts";
import { DONE, GovernanceBlock } from "../runtime/contain.ts";
import type { Effect } from "../../governance/session/effects.ts";
import { isSessionId, type SessionRecord } from "../../governance/session/session-record.ts";
import { type ContinuedSession, continuationOf } from "../../governance/delegation/delegation-policy.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionRuntime } from "../sessions/session-runtime.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { CallNotes } from "../sessions/call-notes.ts";
import type { StopController } from "../stop/stop-controller.ts";
import type { BudgetGuard } from "../budget/budget-guard.ts";
import { CORE_LINE, HOST_LINES } from "../../governance/host/host-lines.ts";
import { confineShell, refuseFileTool } from "./confine.ts";
import { writtenFiles } from "../../governance/stop/file-targets.ts";

/**
 * What the tool gate uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot
 * import wiring/): the context's facts for the guards, the session's record, the budgets.
 */
export type ToolGateDeps = {
  readonly ctx: Pick<
    PluginContext,
    "api" | "clock" | "config" | "confinement" | "directory" | "guarded" | "hostAgents" | "record" | "sealOf" | "store" | "surfaces" | "viewOf"
  >;
  readonly tracker: Pick<SessionTracker, "ensureSeen" | "seenNow">;
  readonly sessions: Pick<SessionRuntime, "peek">;
  readonly runner: Pick<EffectRunner, "dispatchSoft" | "run" | "step">;
  readonly stops: Pick<StopController, "onLife">;
  readonly budget: Pick<BudgetGuard, "onToolCall" | "running" | "spend">;
  readonly calls: Pick<CallNotes, "set">;
};

/**
 * A tool call about to run, in the plugin's own words; each adapter builds it from its host's hook
 * (plugin/opencode-1/tool-calls.ts, plugin/opencode-2/tool-calls.ts). `tool` is the core's name (`coreToolName` of
 * governance/host/host-lines.ts: `task`, `bash`, …); `args` the host's argument object, only read; `spawn` is set
 * when the call starts a subagent: the target agent, the prompt it will run, its description and — OpenCode 1's
 * `task_id` — the existing session it continues instead of creating one.
 */
export type ToolCall = {
  sessionId: string;
  callId: string;
  tool: string;
  args: Record<string, unknown> | undefined;
  spawn?: { agent: string; prompt?: string; description?: string; continues?: string };
  /** The adapter can confine this shell call through its shell's environment, after the host's permission check (decision 0071). */
  confineByEnv?: boolean;
};

/**
 * What the gate answers: the prompt a spawn runs with, the command a shell call runs instead of the agent's (the same
 * command, confined: plugin/hooks/confine.ts) — or, for a call confined through its shell's environment, the entry
 * script (`BASH_ENV`) its shell must start with. Its adapter writes them into the host's arguments or environment.
 */
export type Gate = { prompt?: string; command?: string; entry?: string };
const PASS: Gate = Object.freeze({});

/**
 * A tool call to gate: records the call (S3), refuses every call of a stopped session (L3), and gates spawns:
 * a leaf caller, a target outside the caller's allow-list, or a child beyond the max depth is blocked by throwing a
 * message written for the model (the host returns it as the tool result). A governed session's call that names
 * governance's key, state folder or CLI is refused and audited `control_refused` (governance/stop/control-surface.ts).
 * An allowed spawn answers the prompt the child runs with (the governance context block in front of it), which the
 * adapter writes back into its host's arguments.
 *
 * Every tool call waits for this (issue 31): a call of a session this process already follows, with nothing to write
 * at once, no stop, no refusal, no budget action and no spawn, is answered without a promise; anything else waits.
 */
export function gateToolCall(rt: ToolGateDeps, call: ToolCall): Gate | Promise<Gate> {
  const known = rt.tracker.seenNow(call.sessionId);
  if (!known.seen) return rt.tracker.ensureSeen(call.sessionId).then((seen) => recordCall(rt, call, seen));
  return recordCall(rt, call, known.record);
}

/** The machine's soft `tool_before` for the call, then the gate on the record it gives. */
function recordCall(rt: ToolGateDeps, call: ToolCall, seen: SessionRecord | undefined): Gate | Promise<Gate> {
  const { ctx, runner } = rt;
  const { sessionId, callId, tool, args, spawn } = call;
  // The caller's role, for the first-action check of its first call (only read while it has made none).
  const current = rt.sessions.peek(sessionId) ?? seen;
  const role = current && current.firstTool === null ? ctx.viewOf(current.agent, current.depth).role : undefined;
  // The core's vocabulary names a spawn's target `subagent_type` (OpenCode 1's, host-lines.ts), whatever the host calls it.
  const summary = toolCallSummary(tool, spawn ? { subagent_type: spawn.agent, description: spawn.description } : args);
  // A stopped session's call is refused below: it writes nothing.
  const files = current && current.parentId !== null && current.control !== "stopped" ? writtenFiles(tool, args, ctx.directory) : [];
  const event = { type: "tool_before", at: ctx.clock.now(), tool, callId, summary, ...(role ? { role } : {}), ...(files.length > 0 ? { files } : {}) } as const;
  const record = runner.dispatchSoft(sessionId, event);
  return record instanceof Promise ? record.then((r) => gateOn(rt, call, r)) : gateOn(rt, call, record);
}

function gateOn(rt: ToolGateDeps, call: ToolCall, record: SessionRecord | undefined): Gate | Promise<Gate> {
  const { ctx } = rt;
  const { sessionId, tool, args } = call;
  if (!record) return PASS;
  rt.stops.onLife(sessionId);
  const stop = onToolBefore(record, tool);
  if (stop.block) return blockStopped(rt, sessionId, record, stop.effects);
  // A governed session's tools never reach governance's key, state folder or CLI (issue 27): O(length of the arguments).
  // A shell command the sandbox will confine is refused only for what it would change (decision 0053); the first one
  // of an instance may have to wait for the probe to know.
  const named = (sandboxed: boolean) => (ctx.guarded(record) ? surfaceNamed(tool, args, ctx.surfaces, { confined: sandboxed }) : undefined);
  const hit = named(ctx.confinement.known?.ok === true);
  if (hit && hit.surface !== "cli" && ctx.confinement.known === undefined && SHELL_TOOLS.has(tool))
    return ctx.confinement.sandbox().then((state) => afterSurface(rt, call, record, named(state.ok)));
  return afterSurface(rt, call, record, hit);
}

function afterSurface(rt: ToolGateDeps, call: ToolCall, record: SessionRecord, hit: SurfaceHit | undefined): Gate | Promise<Gate> {
  const { sessionId, callId, tool, args, spawn } = call;
  if (hit) return refuseSurface(rt, call, record, hit);
  // Every session's in-process file tools, by real path (issue 41): a few stats, only for file tools.
  const file = rt.ctx.confinement.fileToolHit(tool, args, rt.ctx.directory);
  if (file) return refuseFileTool(rt, record, sessionId, tool, file);
  const checked = rt.budget.onToolCall(sessionId, record, tool, callId, args);
  if (spawn) return (checked ?? DONE).then(() => gateSpawn(rt, call, record, spawn));
  const command = tool === SHELL && typeof args?.command === "string" ? args.command : undefined;
  const byEnv = call.confineByEnv === true;
  if (command !== undefined) return checked ? checked.then(() => confineShell(rt, sessionId, command, byEnv)) : confineShell(rt, sessionId, command, byEnv);
  return checked ? checked.then(() => PASS) : PASS;
}

const SHELL = HOST_LINES[CORE_LINE].shellTool;
/** The core's shell tool, and every host's own name for it should an adapter pass it through untranslated. */
const SHELL_TOOLS = new Set(Object.values(HOST_LINES).map((line) => line.shellTool));

async function blockStopped(rt: ToolGateDeps, sessionId: string, record: SessionRecord, effects: readonly Effect[]): Promise<never> {
  await rt.runner.run(sessionId, effects, { next: record });
  throw new GovernanceBlock(
    buildStopDirective({
      level: 3,
      sessionId,
      seal: rt.ctx.sealOf(sessionId),
      reason: record.stop?.reason ?? "",
      origin: stopOrigin(record.stop),
      root: record.parentId === null,
    }),
  );
}

async function refuseSurface(rt: ToolGateDeps, call: ToolCall, record: SessionRecord, hit: SurfaceHit): Promise<never> {
  const { sessionId, tool } = call;
  await rt.ctx.record("control_refused", { sessionId, via: "tool", tool, surface: hit.surface, agent: record.agent, parentId: record.parentId });
  throw new GovernanceBlock(surfaceRefusal(hit, { agent: record.agent, subagent: record.parentId !== null }));
}

async function gateSpawn(rt: ToolGateDeps, call: ToolCall, record: SessionRecord, spawn: NonNullable<ToolCall["spawn"]>): Promise<Gate> {
  const { ctx, runner } = rt;
  const { sessionId, callId } = call;
  const targetAgent = spawn.agent;
  const continues = spawn.continues === undefined ? undefined : await continuedSession(rt, spawn.continues);
  const hostAgent = (name: string) => ctx.hostAgents.get(name);
  const request = continues ? { targetAgent, continues, config: ctx.config, hostAgent } : { targetAgent, config: ctx.config, hostAgent };
  const { decision } = await runner.step(sessionId, (r) => decideSpawn(r, request));
  if (decision.kind !== "allowed") throw new GovernanceBlock(decision.message);
  const spent = await rt.budget.spend.refuseSpawn(sessionId, targetAgent);
  if (spent !== undefined) throw new GovernanceBlock(spent);
  const refusal = await rt.budget.running.check(sessionId, callId, targetAgent, continues?.sessionId);
  if (refusal !== undefined) throw new GovernanceBlock(refusal);
  if (decision.note !== null) rt.calls.set(callId, decision.note);
  if (spawn.prompt === undefined) return PASS;
  const who = ctx.viewOf(targetAgent, decision.childDepth);
  return { prompt: enrichTaskPrompt(spawn.prompt, { parentSessionId: sessionId, parentAgent: record.agent, who, scope: spawn.description }) };
}

/**
 * The session a `task_id` names, for the spawn gate: its parent as the host reports it (the authority; governance's
 * record when the host does not answer), and governance's control over it. A `task_id` that is no session id names
 * nothing OpenCode can find (it creates a new session): `undefined`, a plain spawn.
 */
async function continuedSession(rt: ToolGateDeps, id: string): Promise<ContinuedSession | undefined> {
  if (!isSessionId(id)) return undefined;
  const [host, record] = await Promise.all([rt.ctx.api.parentOf(id), rt.ctx.store.read(id)]);
  return continuationOf(id, host, record);
}
