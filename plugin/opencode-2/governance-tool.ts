import * as z from "../../governance/zod.ts";
import { GOVERNANCE_TOOL_ARGS, GOVERNANCE_TOOL_DESCRIPTION, GOVERNANCE_TOOL_INPUT, GOVERNANCE_TOOL_NAME, runGovernanceTool } from "../hooks/governance-tool.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { ToolEditor } from "./types.ts";

const Args = z.object(GOVERNANCE_TOOL_ARGS);

/**
 * The governance tool (plugin/hooks/governance-tool.ts) added through `tool.transform`: its input as JSON Schema (the
 * host refuses a zod built by another zod instance), parsed again with zod inside `execute`. An unexpected error is
 * reported and the model reads a plain refusal.
 */
export function offerGovernanceTool(editor: ToolEditor, rt: Runtime, sink: (hook: string, error: unknown) => void): void {
  editor.add({
    name: GOVERNANCE_TOOL_NAME,
    description: GOVERNANCE_TOOL_DESCRIPTION,
    input: GOVERNANCE_TOOL_INPUT as unknown as Record<string, unknown>,
    options: { codemode: false },
    async execute(input, context) {
      const parsed = Args.safeParse(input);
      const text = parsed.success
        ? await runGovernanceTool(rt.ctx, (id) => rt.stops.poke(id), parsed.data, {
            sessionID: context.sessionID,
            agent: context.agent,
            hostLine: rt.host.line,
          }).catch((error: unknown) => {
            sink("governance-tool", error);
            return "Governance could not do that (see the audit log).";
          })
        : `Not done: ${z.prettifyError(parsed.error)}`;
      return { output: text, content: text };
    },
  });
}
