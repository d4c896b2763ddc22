import { checkSpawn, roleOf } from "../../governance/delegation/delegation-policy.ts";
import { onToolBefore } from "../../governance/stop/stop-ladder.ts";
import { buildStopDirective } from "../../governance/texts/stop-directives.ts";
import { buildLogOnlyNote } from "../../governance/texts/delegation-messages.ts";
import { enrichTaskPrompt } from "../../governance/texts/task-context-block.ts";
import { toolCallSummary } from "../../governance/texts/tool-call-summary.ts";
import { GovernanceBlock } from "../contain.ts";
import type { Governor } from "../governor.ts";
import { roleForTexts } from "./config.ts";

/** Tools that create a session. `task` is OpenCode's; the list is here so another spawner is one line away. */
export const SPAWNING_TOOLS = new Set(["task"]);

/** One line about the call for the record (never the whole payload): controls stripped, secrets redacted. */
export const summarizeArgs = toolCallSummary;

/**
 * `tool.execute.before`: records the call (S3), refuses every call of a stopped session (L3), and gates spawns:
 * a leaf caller, a target outside the caller's allow-list, or a child beyond the max depth is blocked by throwing a
 * message written for the model (OpenCode returns it as the tool result). An allowed spawn gets the governance
 * context block in its prompt.
 */
export async function toolBefore(gov: Governor, input: { tool: string; sessionID: string; callID: string }, output: { args: any }): Promise<void> {
  const sessionId = input.sessionID;
  await gov.ensureSeen(sessionId);
  const record = await gov.apply(sessionId, {
    type: "tool_before",
    at: gov.clock.now(),
    tool: input.tool,
    callId: input.callID,
    summary: summarizeArgs(input.tool, output.args),
  }, { soft: true });
  if (!record) return;

  const stop = onToolBefore(record);
  if (stop.block) {
    await gov.record("tool_blocked", { sessionId, tool: input.tool, reason: stop.reason });
    gov.onBlockedCall?.(sessionId);
    throw new GovernanceBlock(buildStopDirective({ level: 3, sessionId, reason: record.stop?.reason ?? "" }));
  }
  if (!SPAWNING_TOOLS.has(input.tool) || !output.args || typeof output.args !== "object") return;

  const callerAgent = record.agent;
  const targetAgent = String(output.args.subagent_type ?? "general");
  const decision = checkSpawn({ callerAgent, callerDepth: record.depth, targetAgent, config: gov.config });
  if (!decision.ok) {
    const enforce = gov.config.enforcement === "enforce";
    const data = { sessionId, kind: decision.kind, callerAgent, targetAgent, callerDepth: record.depth, childDepth: decision.childDepth, enforced: enforce };
    await gov.record(decision.kind === "max_depth" ? "emergency_halt" : "delegation_blocked", data);
    await gov.update(sessionId, (r) =>
      r
        ? {
            ...r,
            counters: { ...r.counters, violations: r.counters.violations + 1 },
            ...(decision.kind === "max_depth" ? { halt: { at: gov.clock.now(), reason: "MAX_DELEGATION_DEPTH_EXCEEDED", detail: `${callerAgent ?? "?"} → ${targetAgent} at depth ${decision.childDepth}` } } : {}),
          }
        : r,
    );
    if (enforce) {
      await gov.api.toast(decision.kind === "max_depth" ? `EMERGENCY HALT: ${callerAgent ?? "agent"} tried to delegate beyond depth ${gov.config.delegation.maxDepth}` : `Delegation blocked: ${callerAgent ?? "agent"} → ${targetAgent}`, decision.kind === "max_depth" ? "error" : "warning");
      throw new GovernanceBlock(decision.message);
    }
    gov.callNotes.set(input.callID, buildLogOnlyNote({ kind: decision.kind, callerAgent, targetAgent }));
  }
  const targetRole = roleForTexts(gov, targetAgent, roleOf(targetAgent, gov.config).role);
  const childDepth = record.depth + 1;
  if (typeof output.args.prompt === "string") {
    output.args.prompt = enrichTaskPrompt(output.args.prompt, {
      parentSessionId: sessionId,
      parentAgent: callerAgent,
      childDepth,
      childLevel: Math.min(childDepth + 1, 3),
      maxDepth: gov.config.delegation.maxDepth,
      targetAgent,
      targetRole,
      scope: typeof output.args.description === "string" ? output.args.description : undefined,
    });
  }
  await gov.remember(sessionId, `delegated to ${targetAgent}`);
}
