import { describe, expect, test } from "vitest";
import { taskOutcome } from "../../plugin/opencode-1/tool-calls.ts";
import { TASK_RESULTS, normalizeTaskResult } from "../plugin/fixtures/task-results.ts";
import { e2eHost, type ModelRequest, type Reply, textOf, waitFor } from "../harness/index.ts";

/**
 * `taskOutcome` reads OpenCode's `task` result text to close a child's link as completed or aborted. This test takes
 * that text from the real binary (the parent's next request carries it as the tool result) and compares it with the
 * strings pinned in test/plugin/fixtures/task-results.ts, which the unit test feeds to `taskOutcome`. If OpenCode
 * changes its wording, this fails instead of every task silently counting as completed.
 */
const task = (subagent_type: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: `hand over to ${subagent_type}`, prompt, subagent_type } }],
});

function respond(req: ModelRequest): Reply {
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  const isChild = req.system.includes("You are a delegating governance agent");
  if (toolResults > 0) return { text: "noted" };
  if (!isChild) return task("governance-high", firstUser);
  if (firstUser.includes("SLOW")) return { hang: true };
  if (firstUser.includes("FAIL")) return { httpError: 400, message: "scripted failure" };
  return { text: "CHILD RESULT TEXT" };
}

describe("OpenCode's task result formats (real opencode serve)", () => {
  const { model, serve } = e2eHost({ respond, agents: true });

  /** The `task` tool result the parent's model read, ids normalized. */
  const taskResultOf = (sessionId: string): string | undefined => {
    const req = model.requests.filter((r) => r.kind === "agent" && r.sessionId === sessionId && r.messages.some((m) => m.role === "tool")).at(-1);
    const text = req ? textOf(req.messages.filter((m) => m.role === "tool").at(-1)?.content) : undefined;
    return text === undefined ? undefined : normalizeTaskResult(text);
  };

  test("a task that completes", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "FAST work", { agent: "governance-coordinator" });
    await serve.http.waitIdle([root.id]);
    const text = taskResultOf(root.id);
    if (process.env.PRINT_TASK_RESULTS) console.log(JSON.stringify({ completed: text }));
    expect(text).toBe(TASK_RESULTS.completed);
    expect(taskOutcome(text ?? "")).toBe("completed");
  });

  test("a task whose child is aborted", async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "SLOW work", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root.id))[0], "child session");
    await waitFor(() => model.requests.some((r) => r.sessionId === child.id) && model.openStreams() > 0, "child streaming");
    await serve.http.abort(child.id);
    await serve.http.waitIdle([root.id, child.id]);
    const text = await waitFor(() => taskResultOf(root.id), "the parent's request after the task");
    if (process.env.PRINT_TASK_RESULTS) console.log(JSON.stringify({ aborted: text }));
    expect(text).toBe(TASK_RESULTS.aborted);
    expect(taskOutcome(text)).toBe("aborted");
  });

  test("a task whose child's model fails (issue 21 item 3)", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "FAIL work", { agent: "governance-coordinator" });
    await serve.http.waitIdle([root.id]);
    const text = await waitFor(() => taskResultOf(root.id), "the parent's request after the task");
    if (process.env.PRINT_TASK_RESULTS) console.log(JSON.stringify({ failed: text }));
    expect(text).toBe(TASK_RESULTS.failed);
    expect(taskOutcome(text)).toBe("failed");
  });
});
