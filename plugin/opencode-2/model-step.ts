import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { compactionContext } from "../hooks/compacting.ts";
import { stepNotes } from "../hooks/step-notes.ts";
import { prefixStep } from "../hooks/step-prefix.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { Covered } from "../wiring/hook-wiring.ts";
import { applyHostFacts } from "./host-facts.ts";
import type { SessionContextEvent } from "./types.ts";

/**
 * `session.hook("context")` → a model step to prepare (plugin/hooks/step-prefix.ts, step-notes.ts). The release line
 * calls `context` for the agent loop only (compaction, generate and title have hooks of their own) and its payload has
 * no `kind` (packages/core/src/session/model-request.ts @ 0330149c, 2.0.16 fork @ 605708ad). Pre-release builds
 * carried `kind` on it: a request that says it is not the agent loop gets nothing. `legacyKindFilter` is TEST-ONLY
 * (setup.ts). The stable prefix goes in `system`; the status note (a parent's note at its head: `NOTE_PLACEMENT`) is
 * one user message after the last one, as on OpenCode 1 (docs/decisions/0011): the cached prefix holds. `skipPrefix` is
 * the TEST-ONLY switch of plugin/runtime/test-switches.ts. Answers what coverage counts (reported by the wiring).
 */
export async function prepareStep(
  rt: Runtime,
  e: SessionContextEvent,
  test: { legacyKindFilter?: boolean; skipPrefix?: boolean } = {},
): Promise<Covered | undefined> {
  const kind = test.legacyKindFilter ? (e.kind ?? "absent") : e.kind;
  if (kind !== undefined && kind !== "primary") return undefined;
  const notes = await stepNotes(rt, { sessionId: e.sessionID, agent: e.agent });
  // What the host offers this agent (the delegation tool, the governance tool) before the prefix says who it is.
  applyHostFacts(rt, e);
  const prefix = test.skipPrefix ? undefined : await prefixStep(rt, e.sessionID);
  if (prefix !== undefined) e.system.push({ type: "text", text: prefix });
  if (notes.statusNote) e.messages.push(v2Message(e.messages, notes.statusNote));
  // Coverage: this step carried the prefix, and the status note's hook ran (the same hook on OpenCode 2).
  return { sessionId: e.sessionID, prefixed: prefix?.startsWith(GOVERNANCE_PREFIX_HEADING) === true, noted: true };
}

/** `session.hook("compaction")`: the compaction context (anchors, last actions, hierarchy) joins the summarizer's system. */
export async function prepareCompaction(rt: Runtime, e: SessionContextEvent): Promise<void> {
  for (const text of await compactionContext(rt, e.sessionID)) e.system.push({ type: "text", text });
}

/**
 * A user message in OpenCode 2's request shape (`LLM.Message` of packages/ai/src/schema/messages.ts @ 2b33fbee:
 * `{ role, content: ContentPart[] }`), made with the class of the request's own messages when they are instances of
 * one, so the host sees the type it built.
 */
function v2Message(messages: readonly unknown[], text: string): unknown {
  const input = { role: "user", content: [{ type: "text", text }] };
  const Ctor = (messages[0] as { constructor?: unknown } | undefined)?.constructor;
  return typeof Ctor === "function" && Ctor !== Object ? new (Ctor as new (i: typeof input) => unknown)(input) : input;
}
