import { describe, expect, test } from "vitest";
import { auditEvents, e2eHost, type ModelRequest, projectCli, type Reply, sessionRecord, textOf, waitFor, waitForRecord } from "../harness/index.ts";

/**
 * Issue 21 item 3 (seed 002): every exit path releases the bookkeeping. On the real `opencode serve`: a child whose
 * task completes, one whose model fails (its `task` ends in an error: no `tool.execute.after`), and one deleted while
 * it runs each end with a record and a parent link that say what happened, and `sessions --json` no longer lists
 * them as running. Before: the failed child kept `control: active` and its link `running` forever; a deletion was
 * ignored.
 */
const task = (prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: "hand over", prompt, subagent_type: "governance-high" } }],
});

function respond(req: ModelRequest): Reply {
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  const isChild = req.system.includes("You are a delegating governance agent");
  if (!isChild) return toolResults > 0 ? { text: "noted" } : task(firstUser);
  if (firstUser.includes("FAIL")) return { httpError: 400, message: "scripted failure" };
  if (firstUser.includes("HANG")) return { hang: true };
  return { text: "CHILD RESULT TEXT" };
}

describe("every exit path of a child ends its bookkeeping (real opencode serve)", () => {
  const { model, project, serve } = e2eHost({ respond, agents: true });

  const childOf = async (rootId: string) => (await waitFor(async () => (await serve.http.children(rootId))[0], "child session")).id;
  const running = async () => {
    const out = await projectCli(project, ["sessions", "--json"]);
    return (JSON.parse(out.stdout).sessions as { sessionId: string; running: boolean }[]).filter((s) => s.running).map((s) => s.sessionId);
  };
  const linkOf = (parentId: string, childId: string) =>
    ((sessionRecord(project.governanceDir, parentId)?.children ?? []) as { sessionId: string; outcome: string }[]).find((c) => c.sessionId === childId);

  test("completed: child `completed` with its end, link `completed`", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "FAST work", { agent: "governance-coordinator" });
    const child = await childOf(root.id);
    const record = await waitForRecord(project.governanceDir, child, (r) => r.end != null, "child ended");
    expect({ control: record.control, how: record.end.how }).toEqual({ control: "completed", how: "completed" });
    expect(linkOf(root.id, child)?.outcome).toBe("completed");
    expect(await running()).not.toContain(child);
  });

  test("failed: the child's model fails, its task ends in an error → child ended `failed`, link `failed`, not running", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "FAIL work", { agent: "governance-coordinator" });
    const child = await childOf(root.id);
    await serve.http.waitIdle([root.id, child]);
    const record = await waitForRecord(project.governanceDir, child, (r) => r.end != null, "child ended", 10_000);
    expect({ control: record.control, how: record.end.how }).toEqual({ control: "completed", how: "failed" });
    expect(record.end.detail).toBeTruthy();
    await waitFor(() => linkOf(root.id, child)?.outcome === "failed", "link failed", 5_000);
    expect(await running()).not.toContain(child);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "session_ended" && e.sessionId === child && e.how === "failed")).toBe(true);
  });

  test("deleted while it runs: child ended `deleted`, link `aborted`, not running, the parent goes on", async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "HANG work", { agent: "governance-coordinator" });
    const child = await childOf(root.id);
    await waitFor(() => model.requests.some((r) => r.sessionId === child) && model.openStreams() > 0, "child streaming");
    await waitForRecord(project.governanceDir, child, (r) => r.control === "active", "child recorded");
    await serve.http.deleteSession(child);
    const record = await waitForRecord(project.governanceDir, child, (r) => r.end?.how === "deleted", "child ended deleted", 10_000);
    expect(record.control).toBe("completed");
    await waitFor(() => linkOf(root.id, child)?.outcome === "aborted", "link closed", 5_000);
    expect(await running()).not.toContain(child);
    await serve.http.waitIdle([root.id], 30_000);
  });
});
