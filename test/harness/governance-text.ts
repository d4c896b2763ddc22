import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { statusNote, textOf, type ModelRequest } from "./scripted-model.ts";

/**
 * Bytes of governance text in one recorded model request, as the provider receives them (UTF-8): the prefix in the
 * system prompt, the governance tool's entry in the request's tool list (its JSON, as OpenCode sent it), the status
 * note after the last message and task context blocks in the history. The per-request budget (issue 31: ≤ 1 024 B of
 * prefix + tool for OpenCode's `build` agent) is `system + tools`; the note and blocks are counted beside it.
 */
export function governanceBytes(req: ModelRequest): { prefix: number; note: number; tools: number; block: number; total: number } {
  const at = req.system.indexOf(GOVERNANCE_PREFIX_HEADING);
  const prefix = at < 0 ? 0 : Buffer.byteLength(req.system.slice(at).split("\n\n")[0]!);
  const tools = governanceToolEntries(req).reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t)), 0);
  let block = 0;
  for (const m of req.messages)
    for (const b of textOf(m.content).match(/<governance-context>[\s\S]*?<\/governance-context>/g) ?? []) block += Buffer.byteLength(b);
  const note = Buffer.byteLength(statusNote(req) ?? "");
  return { prefix, note, tools, block, total: prefix + note + tools + block };
}

/** The request's tool list entries of governance's tool(s), as sent. */
export function governanceToolEntries(req: ModelRequest): { function: { name: string } }[] {
  return ((req.body.tools as { function: { name: string } }[] | undefined) ?? []).filter(
    (t) => t.function.name === "governance" || t.function.name.startsWith("governance_"),
  );
}

/**
 * Which of this repository's agents (agents/*.md) a request belongs to, from the agent's own prompt in the system
 * prompt: `coordinator`, `high`, `executor`, `verifier`, `builder`, `validator`, else `other`.
 */
export function shippedAgentOf(req: Pick<ModelRequest, "system">): string {
  const s = req.system;
  if (s.includes("You are the governance coordinator")) return "coordinator";
  if (s.includes("You are a delegating governance agent")) return "high";
  if (s.includes("You are an executor")) return "executor";
  if (s.includes("You are a verifier")) return "verifier";
  if (s.includes("You are a builder")) return "builder";
  if (s.includes("You are a validator")) return "validator";
  return "other";
}
