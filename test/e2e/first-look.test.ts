/**
 * First-look words and numbers on the real OpenCode 1 binary (issue 39). A root session delegates; its child is cut off
 * by Escape (an abort of the root) and OpenCode quits. Then: `status` names the root's coverage with its child linked
 * ("1/1 children linked" — the task never returned a result, which is what the count used to wait for) and counts no
 * session running; OpenCode started again in the project says once — a toast and an audit line — that the session
 * can be resumed, with its `opencode -s <id>` command.
 */
import { describe, expect, test } from "vitest";
import { allSessionRecords, auditEvents, e2eHost, listen, type ModelRequest, type Reply, serveOpencode, textOf, waitFor } from "../harness/index.ts";
import { projectCli } from "../harness/project-cli.ts";

function respond(req: ModelRequest): Reply {
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  if (req.messages.some((m) => m.role === "tool")) return { text: "finished" };
  if (req.system.includes("You are the governance coordinator") && firstUser.includes("DELEGATE"))
    return { toolCalls: [{ name: "task", args: { description: "long job", prompt: "WORK slowly", subagent_type: "governance-executor" } }] };
  if (firstUser.includes("WORK slowly")) return { hang: true };
  return { text: "done" };
}

describe("first look after Escape and quit (real opencode)", () => {
  const { project } = e2eHost({ respond, agents: true, serve: false });

  test("coverage counts the cut-off child, nothing is running, and the next start offers the resume once", async () => {
    const first = await serveOpencode(project);
    let rootId = "";
    try {
      const root = await first.http.createSession();
      rootId = root.id;
      await first.http.promptAsync(root.id, "DELEGATE a long job", { agent: "governance-coordinator" });
      await waitFor(() => allSessionRecords(project.governanceDir).find((r) => r.parentId === root.id), "the child's record", 30_000);
      await new Promise((r) => setTimeout(r, 500));
      await first.http.abort(root.id); // Escape
      await first.http.waitIdle([root.id]);
      await waitFor(
        () => auditEvents(project.governanceDir).find((e) => e.type === "session_aborted" || e.type === "session_interrupted"),
        "the Escape audited",
      );
    } finally {
      await first.stop();
    }
    const status = await projectCli(project, ["status"]);
    expect(status.stdout).toContain(`coverage: last session ${rootId}:`);
    expect(status.stdout).toMatch(/, 1\/1 children linked/);
    expect(status.stdout).toMatch(/sessions: 0 running now; 2 recorded: /);

    // OpenCode started again in the project: once a client is there (here its first session), one toast naming the
    // session and its command, one audit line.
    const again = await serveOpencode(project);
    const bus = listen(again.url, project.dir);
    try {
      const toasts = () => bus.events.filter((e) => e.type === "tui.toast.show" && String(e.properties?.message).includes(`opencode -s ${rootId}`));
      const first = await again.http.createSession();
      await again.http.prompt(first.id, "hello");
      await waitFor(() => toasts().length === 1 || undefined, "the resume toast on the event stream", 20_000);
      expect(String(toasts()[0]?.properties?.message)).toMatch(
        new RegExp(`^Session .*\\(${rootId}\\) was interrupted and can be resumed: opencode -s ${rootId}$`),
      );
      const offered = auditEvents(project.governanceDir).filter((e) => e.type === "resume_offered");
      expect(offered).toHaveLength(1);
      expect(offered[0]).toMatchObject({ sessionId: rootId, count: 1 });
      // A new session in the same process is not told again.
      const other = await again.http.createSession();
      await again.http.prompt(other.id, "hello");
      await again.http.waitIdle([other.id]);
      expect(toasts()).toHaveLength(1);
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "resume_offered")).toHaveLength(1);
    } finally {
      bus.close();
      await again.stop();
    }
  });
});
