import { HOST_LINES } from "../../governance/host/host-lines.ts";
import { isSessionId } from "../../governance/session/session-record.ts";
import { carryDirectives, type ChildOutcome } from "../hooks/tool-after.ts";
import { type Gate, gateToolCall } from "../hooks/tool-before.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { ConfinedCalls } from "./shell-confine.ts";

const V1 = HOST_LINES[1];

/**
 * How OpenCode 1's `task` result says a child ended. The formats are pinned by test/plugin/opencode-1/task-outcome.test.ts
 * against strings captured from the real binary (test/e2e/task-result-format.test.ts).
 */
export function taskOutcome(output: string): ChildOutcome {
  const head = output.slice(0, 200);
  // 1.18 writes `<task … state="…">` results, and "Subagent failed (task_id: …)" for a child whose model failed.
  if (/^<task [^>]*state="(cancelled|aborted)"/.test(head) || /^(Task|Subagent) cancelled/.test(head)) return "aborted";
  if (/^<task [^>]*state="(error|failed)"/.test(head) || head.startsWith("Subagent failed")) return "failed";
  return "completed";
}

/** A tool's arguments: an object (OpenCode validates the fields after this hook). A type check: this runs on every call. */
function toolArgs(args: unknown): Record<string, unknown> | undefined {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
}

/**
 * `tool.execute.before` → the tool call to gate (plugin/hooks/tool-before.ts). A `task` call is a spawn: its target is
 * `subagent_type` (OpenCode's `general` when left out), and a `task_id` names the session it continues; the prompt
 * governance answers is written into OpenCode's own argument object, so the task runs with it. A refusal throws, and
 * OpenCode returns it as the tool result.
 */
export function toolBefore(
  rt: Runtime,
  input: { tool: string; sessionID: string; callID: string },
  output: { args: unknown },
  entries?: ConfinedCalls,
): Promise<void> | undefined {
  const args = toolArgs(output.args);
  const spawn =
    input.tool === V1.delegateTool && args
      ? {
          agent: String(args[V1.delegateAgentArg] ?? "general"),
          ...(typeof args.prompt === "string" ? { prompt: args.prompt } : {}),
          ...(typeof args.description === "string" ? { description: args.description } : {}),
          ...(typeof args.task_id === "string" ? { continues: args.task_id } : {}),
        }
      : undefined;
  const confineByEnv = input.tool === V1.shellTool && entries?.bash === true;
  const call = {
    sessionId: input.sessionID,
    callId: input.callID,
    tool: input.tool,
    args,
    ...(spawn ? { spawn } : {}),
    ...(confineByEnv ? { confineByEnv } : {}),
  };
  const gated = gateToolCall(rt, call);
  if (gated instanceof Promise) return gated.then((g) => withPrompt(args, g, input.callID, entries));
  // Most calls are answered at once (plugin/hooks/tool-before.ts): no promise for the host to wait on.
  withPrompt(args, gated, input.callID, entries);
}

/**
 * The prompt governance answers for a spawn, and the confined command for a `bash` call, written into OpenCode's own
 * argument object: OpenCode 1 runs the tool with that object (checked on 1.18.33: test/e2e/confinement.test.ts).
 */
function withPrompt(args: Record<string, unknown> | undefined, gated: Gate, callId: string, entries: ConfinedCalls | undefined): void {
  if (args && gated.prompt !== undefined) args.prompt = gated.prompt;
  if (args && gated.command !== undefined && gated.command !== args.command) args.command = gated.command;
  if (gated.entry !== undefined) entries?.add(callId, gated.entry);
}

/**
 * `tool.execute.after` → the tool result to carry directives (plugin/hooks/tool-after.ts). A `task` result names its
 * child in `metadata.sessionId` (structured) and how it ended in its text (`taskOutcome`); the output governance
 * answers replaces OpenCode's.
 */
export async function toolAfter(
  rt: Runtime,
  input: { tool: string; sessionID: string; callID: string },
  output: { title: string; output: string; metadata: unknown },
): Promise<void> {
  const text = String(output.output ?? "");
  const childId = input.tool === V1.delegateTool ? (output.metadata as { sessionId?: unknown } | null | undefined)?.sessionId : undefined;
  const child = isSessionId(childId) ? { sessionId: childId, outcome: taskOutcome(text) } : undefined;
  const out = await carryDirectives(rt, { sessionId: input.sessionID, callId: input.callID, tool: input.tool, output: text, ...(child ? { child } : {}) });
  if (out !== text) output.output = out;
}
