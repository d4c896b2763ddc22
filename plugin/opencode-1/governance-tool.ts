import type { ToolDefinition, tool as hostTool } from "@opencode-ai/plugin";
import { GOVERNANCE_TOOL_ARGS, GOVERNANCE_TOOL_DESCRIPTION, GOVERNANCE_TOOL_NAME, runGovernanceTool } from "../hooks/governance-tool.ts";
import type { PluginContext } from "../runtime/context.ts";

/**
 * `tool()` of @opencode-ai/plugin is the identity (its `tool.schema` is zod). Importing it at run time would put the
 * whole zod namespace object — every locale, JSON-Schema conversion — into the bundle; the types are the same.
 */
const tool = ((input: unknown) => input) as typeof hostTool;

/**
 * The governance tool (plugin/hooks/governance-tool.ts) as OpenCode 1's `tool` hook entry: its zod fields typed as the
 * host's zod (what `tool.schema` was), built by the bundle's one zod.
 */
export function offerGovernanceTool(gov: PluginContext, afterRequest: (sessionId: string) => Promise<void>): Record<string, ToolDefinition> {
  return {
    [GOVERNANCE_TOOL_NAME]: tool({
      description: GOVERNANCE_TOOL_DESCRIPTION,
      args: GOVERNANCE_TOOL_ARGS as unknown as Parameters<typeof hostTool>[0]["args"],
      execute: (args, context) => runGovernanceTool(gov, afterRequest, args as never, { sessionID: context.sessionID, agent: context.agent }),
    }),
  };
}
