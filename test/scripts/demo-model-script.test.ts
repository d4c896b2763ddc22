import { describe, expect, test } from "vitest";
import { buildTaskContextBlock } from "../../governance/texts/task-context-block.ts";
import type { ChatMessage, ModelRequest } from "../harness/index.ts";
import { STATUS_NOTE_HEADING } from "../harness/index.ts";
import { MARK, respond, toolResultsThisTurn, turnPrompt } from "../../scripts/demo/model-script.ts";

/**
 * The demo's scripted model decides from the request alone. Governance appends its status note as the request's last
 * user message; a script that took that note for the user's turn started its turn over after every tool result, so the
 * coordinator re-read README.md until the loop guard stopped it (scenes 2–4).
 */

const request = (messages: ChatMessage[]): ModelRequest => ({
  index: 0,
  sessionId: "ses_test",
  kind: "agent",
  system: "",
  messages,
  tools: ["read", "task"],
  body: {},
  headers: {},
  receivedAt: 0,
});

const read = (filePath: string, id: string): ChatMessage[] => [
  { role: "assistant", content: "", tool_calls: [{ id, type: "function", function: { name: "read", arguments: JSON.stringify({ filePath }) } }] },
  { role: "tool", tool_call_id: id, content: `contents of ${filePath}` },
];

/** A status note that even quotes an earlier prompt, marker and all, in the middle of a line. */
const note = (): ChatMessage => ({ role: "user", content: `${STATUS_NOTE_HEADING}\nLast prompt: "${MARK.chain} Review the README."` });

describe("the demo's scripted model", () => {
  test("a turn goes on after each tool result when governance's status note ends the request", () => {
    const prompt: ChatMessage = { role: "user", content: `${MARK.prefix} Look around the project.` };
    expect(respond(request([prompt, note()]))).toEqual({ toolCalls: [{ name: "read", args: { filePath: "README.md" } }] });
    const afterOne = request([prompt, ...read("README.md", "c1"), note()]);
    expect(toolResultsThisTurn(afterOne)).toBe(1);
    expect(respond(afterOne)).toEqual({ toolCalls: [{ name: "read", args: { filePath: "docs/notes.md" } }] });
    const afterTwo = request([prompt, ...read("README.md", "c1"), ...read("docs/notes.md", "c2"), note()]);
    expect(respond(afterTwo)).toEqual({ text: expect.stringContaining("README") });
  });

  test("the turn is the latest marked prompt: a later scene's prompt in the same session, not the first one", () => {
    const first: ChatMessage = { role: "user", content: `${MARK.prefix} Look around the project.` };
    const second: ChatMessage = { role: "user", content: `${MARK.chain} Review the README.` };
    const req = request([first, ...read("README.md", "c1"), { role: "assistant", content: "done" }, second, note()]);
    expect(turnPrompt(req)).toContain(MARK.chain);
    expect(toolResultsThisTurn(req)).toBe(0);
    expect(respond(req)).toEqual({
      toolCalls: [expect.objectContaining({ name: "task", args: expect.objectContaining({ subagent_type: "governance-high" }) })],
    });
  });

  test("a child's task prompt is found under governance's context block", () => {
    const block = buildTaskContextBlock({
      parentSessionId: "ses_parent",
      parentAgent: "governance-coordinator",
      who: { agent: "governance-high", role: "delegating", level: 1, depth: 1, maxDepth: 3 } as never,
      scope: `review objective ${MARK.chainValidate}`,
    });
    const child: ChatMessage = { role: "user", content: `${block}\n\n${MARK.chainHigh} Objective: review the README.` };
    const req = request([child, note()]);
    expect(turnPrompt(req)).toContain(MARK.chainHigh);
    expect(respond(req)).toEqual({
      toolCalls: [expect.objectContaining({ name: "task", args: expect.objectContaining({ subagent_type: "governance-executor" }) })],
    });
  });
});
