import { decideSpawn } from "../../governance/delegation/spawn-gate.ts";
import { coreToolName, HOST_LINES } from "../../governance/host/host-lines.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import { carryDirectives, type ChildOutcome } from "../hooks/tool-after.ts";
import { gateToolCall } from "../hooks/tool-before.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { ConfinedShells } from "./shell-confine.ts";
import type { PermissionEvaluateEvent, ToolAfterEvent, ToolBeforeEvent, ToolResult } from "./types.ts";

const V2 = HOST_LINES[2];
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/**
 * How OpenCode 2's `subagent` result says a child ended (packages/core/src/tool/plugin/subagent.ts @ 526fbfb7, upstream
 * @ 03cce408): a completed result is `<subagent sessionID=… state="completed">`; the errors are "Subagent cancelled
 * (sessionID: …)" and "Subagent failed (sessionID: …): …".
 */
export function taskOutcome(output: string): ChildOutcome {
  const head = output.slice(0, 200);
  if (/^<subagent [^>]*state="(cancelled|aborted)"/.test(head) || head.startsWith("Subagent cancelled")) return "aborted";
  if (/^<subagent [^>]*state="(error|failed)"/.test(head) || head.startsWith("Subagent failed")) return "failed";
  return "completed";
}

/** What the model reads of a tool result: `content` as a string, or the text of its content parts. */
function resultText(result: ToolResult): string {
  const c = result.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof obj(p).text === "string" ? (obj(p).text as string) : "")).join("");
  return typeof result.output === "string" ? result.output : "";
}

/**
 * The errors a failed call ends with, outermost first: 2.0.15 wraps the cause in its `Tool.Error` (`{ message, error }`)
 * and, when there is an inner `error`, gives the model THAT one's type and message (`{"error":{"type":
 * "permission.rejected","message":"Permission denied: shell"}}` for a call its permissions refuse).
 */
function errorChain(error: unknown): Record<string, unknown>[] {
  const chain: Record<string, unknown>[] = [];
  for (let e = error; e && typeof e === "object" && chain.length < 4; e = (e as Record<string, unknown>).error) chain.push(e as Record<string, unknown>);
  return chain;
}

/** What the model reads of a failed call: the innermost error's message. */
function errorText(error: unknown): string {
  const withText = errorChain(error).filter((e) => typeof e.message === "string" && e.message !== "");
  return String(withText.at(-1)?.message ?? "");
}

/**
 * Writes governance's text where the model reads a failed call's error: every error of the chain (the model reads the
 * innermost). Some of the host's error classes compute `message` with a getter and no setter (2.0.15's
 * `Permission.BlockedError`: `get message() { return this.reason ?? "Permission denied: …" }`), where a plain
 * assignment throws; an own property shadows the getter and keeps the object the host's (its class decides how the
 * host reports it). Before issue 40 only the outer error was written: a stop or guidance for a subagent whose calls
 * the host's permissions refuse was recorded delivered and never reached its model (test/e2e/opencode-2-control.test.ts).
 * Answers whether the model now reads `text`.
 */
function carryOnError(error: unknown, text: string): boolean {
  const chain = errorChain(error);
  for (const e of chain) {
    try {
      Object.defineProperty(e, "message", { value: text, writable: true, configurable: true, enumerable: false });
    } catch {
      // A frozen error: the caller records that the text could not be carried.
    }
  }
  return chain.length > 0 && errorText(error) === text;
}

/**
 * `tool.hook("execute.before")` → the tool call to gate (plugin/hooks/tool-before.ts). A `subagent` call without a
 * `sessionID` is a spawn (its target is `agent`); continuing an existing child creates no session: only the stop
 * check applies. The prompt governance answers is written into the host's input; a refusal rejects, which OpenCode 2
 * turns into the tool's error for the model.
 */
export async function toolBefore(rt: Runtime, e: ToolBeforeEvent, passedGate?: GatedSpawns, shells?: ConfinedShells): Promise<void> {
  const input = obj(e.input);
  const spawning = e.tool === V2.delegateTool && typeof input.sessionID !== "string";
  const spawn = spawning
    ? {
        agent: String(input[V2.delegateAgentArg] ?? "general"),
        ...(typeof input.prompt === "string" ? { prompt: input.prompt } : {}),
        ...(typeof input.description === "string" ? { description: input.description } : {}),
      }
    : undefined;
  // A continued child keeps the host's own tool name: it is not the core's spawning `task`.
  const tool = e.tool === V2.delegateTool && !spawning ? e.tool : coreToolName(2, e.tool);
  const confineByEnv = shells?.byEnv === true && e.tool === V2.shellTool;
  const call = { sessionId: e.sessionID, callId: e.id, tool, args: input, ...(spawn ? { spawn } : {}), ...(confineByEnv ? { confineByEnv } : {}) };
  const gated = await gateToolCall(rt, call);
  // Passed: the host's permission evaluation of this call leaves it as the gate did (`evaluateSpawn`).
  if (e.tool === V2.delegateTool) passedGate?.passed(e.id, spawning ? "spawn" : "continue");
  if (gated.prompt !== undefined) input.prompt = gated.prompt;
  // The confined command (issue 41): where the host has a shell hook, the command stays the agent's (its own rules
  // judge it) and the shell enters the sandbox at `create.before` (./shell-confine.ts, decision 0071); else the command
  // is rewritten here: 2.0.15 runs the tool with the input `execute.before` leaves (test/e2e/opencode-2-host.test.ts).
  if (gated.entry !== undefined && typeof input.command === "string") shells?.add(input.command, gated.entry);
  if (gated.command !== undefined && gated.command !== input.command) input.command = gated.command;
}

/**
 * `tool.hook("execute.after")` → the tool result to carry directives (plugin/hooks/tool-after.ts). A completed
 * `subagent` names its child in `metadata.sessionID` (structured). Its errors carry no structured id on the release
 * line (a `ToolFailure` with a message only, subagent.ts @ 526fbfb7), so there the child is read from the text the
 * host writes for the model ("… (sessionID: ses_…)"). A background child (`status: "running"`) has not ended: no child
 * is named and its link stays open. Answers whether the call was a delegation that named its child (coverage).
 */
export async function toolAfter(rt: Runtime, e: ToolAfterEvent): Promise<{ delegated: boolean; childId: unknown }> {
  const completed = e.status === "completed";
  const text = completed ? resultText(e.result) : errorText(e.error);
  const delegation = e.tool === V2.delegateTool;
  const background = completed && obj(e.result.metadata).status === "running";
  const childId = !delegation ? undefined : completed ? obj(e.result.metadata).sessionID : /\(sessionID: ([^)\s]+)\)/.exec(text)?.[1];
  const child = delegation && !background && isSessionId(childId) ? { sessionId: childId, outcome: taskOutcome(text) } : undefined;
  const tool = background ? e.tool : coreToolName(2, e.tool);
  const out = await carryDirectives(rt, { sessionId: e.sessionID, callId: e.id, tool, output: text, ...(child ? { child } : {}) });
  if (out !== text) {
    if (e.status === "completed") {
      e.result.content = Array.isArray(e.result.content) ? [{ type: "text", text: out }] : out;
    } else if (!carryOnError(e.error, out)) {
      await rt.ctx.record("host_notice", { message: "a tool error could not carry governance text", sessionId: e.sessionID });
    }
  }
  return { delegated: delegation && !background, childId };
}

/** How many gated `subagent` calls are remembered until the host evaluates them (a turn has a handful). */
const REMEMBERED = 256;

/**
 * The `subagent` calls the `execute.before` gate has decided: a spawn it let through, or a continuation of a child
 * (`sessionID`: not a spawn, only the stop check applies). Remembered by call id until the host's permission
 * evaluation of the same call (`source.id`) reads it; bounded, oldest dropped (a process may live for days).
 */
export class GatedSpawns {
  readonly #calls = new Map<string, "spawn" | "continue">();

  passed(callId: string, how: "spawn" | "continue"): void {
    this.#calls.set(callId, how);
    if (this.#calls.size > REMEMBERED) this.#calls.delete(this.#calls.keys().next().value as string);
  }

  take(callId: string | undefined): "spawn" | "continue" | undefined {
    if (callId === undefined) return undefined;
    const how = this.#calls.get(callId);
    this.#calls.delete(callId);
    return how;
  }
}

/**
 * `permission.hook("evaluate")` for a `subagent` call (docs/decisions/0062-spawn-refused-by-permission.md): 2.0.15
 * asks it after its own rules allowed or asked (a config `deny` is final and never reaches it), with the target as the
 * host resolved it (`resources`), after the `execute.before` gate and before the child session is created. A call the
 * gate decided is left as the gate left it (it refuses by rejecting `execute.before`, so a call it refused never gets
 * here). A spawn the gate did not see — its hook failed open on an unexpected error, or the host ran the tool without
 * it — is decided here by the same rule (`decideSpawn`, audited the same way) and, when refused, denied: the host then
 * creates no session and the model reads governance's text. Deny only: this never turns the host's answer into
 * allow or ask.
 */
export async function evaluateSpawn(rt: Runtime, gated: GatedSpawns, e: PermissionEvaluateEvent): Promise<void> {
  if (e.action !== V2.delegateTool || e.effect === "deny") return;
  if (gated.take(e.source?.id) !== undefined) return;
  const config = rt.ctx.config;
  const hostAgent = (name: string) => rt.ctx.hostAgents.get(name);
  await rt.tracker.ensureSeen(e.sessionID, e.agent);
  for (const targetAgent of e.resources) {
    const { decision } = await rt.runner.step(e.sessionID, (r) => decideSpawn(r, { targetAgent, config, hostAgent }));
    if (decision.kind === "allowed") continue;
    e.effect = "deny";
    e.message = decision.message;
    return;
  }
}
