import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import {
  auditEvents,
  e2eHost,
  lastOf,
  locksLeft,
  type ModelRequest,
  projectCli,
  type Reply,
  runOpencode,
  serveOpencode,
  sessionRecord,
  statusNote,
  textOf,
  waitFor,
} from "../harness/index.ts";

/**
 * Issue 21 item 5 on the real `opencode serve`: the host is killed (-9) while a stop is in progress — the child took
 * the stop (control `stopping`, deadline armed) and hangs in a model request. Nothing of the plugin runs at the
 * crash. Must hold: a new stop says at once why not (the host is gone); the next OpenCode process to start (a quick
 * restart, well inside the 10-minute orphan window) ends the pending stop and both records `orphaned`, closes the
 * parent's link, sweeps the child's queue and every lock, and then nothing is listed as running. The root, whose turn
 * the crash cut off, is then resumable at once (issue 43): `resume` lists it, `opencode run -s` gets the context.
 */
function respond(req: ModelRequest): Reply {
  if (lastOf(req, "user")?.includes("CRASH-RESUME")) return { text: "resumed" };
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  if (first.includes("CRASH-PARENT") && tools === 0)
    return { toolCalls: [{ name: "task", args: { description: "work", prompt: "CRASH-CHILD read then think", subagent_type: "governance-executor" } }] };
  if (first.includes("CRASH-CHILD") && tools === 0) return { toolCalls: [{ name: "read", args: { filePath: "PLAN.md" } }] };
  if (first.includes("CRASH-CHILD")) return { hang: true, silent: true };
  return { text: "ok" };
}

describe("a crash in the middle of a stop (kill -9 of opencode serve)", () => {
  const { model, project } = e2eHost({ respond, agents: true, files: { "PLAN.md": "# plan\n" }, serve: false });

  test("the stop in progress is ended, the records say orphaned, leftovers are swept, a new stop says why not", async () => {
    const serve = await serveOpencode(project);
    const root = (await serve.http.createSession()).id;
    await serve.http.promptAsync(root, "CRASH-PARENT delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child");
    await waitFor(() => sessionRecord(project.governanceDir, child)?.lastToolCall?.tool === "read", "child made its tool call");
    const asked = await projectCli(project, ["stop", child, "--reason", "crash test"]);
    expect(asked.code, asked.stderr).toBe(0);
    await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "stopping", "the plugin took the stop", 30_000);
    const pid = sessionRecord(project.governanceDir, child)!.hostedBy.pid as number;
    await serve.crash();

    // No process runs: a new stop does something or says why not — here, why not.
    const again = await projectCli(project, ["stop", child]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`its OpenCode process ${pid} is gone`);

    // A quick restart: the new process's start sweep finds the dead host and ends what it left. `opencode serve`
    // starts a project (and its plugins) on the first request for it, as an editor or the web UI makes on connect.
    const next = await serveOpencode(project);
    try {
      await next.http.status();
      await waitFor(() => sessionRecord(project.governanceDir, child)?.control === "orphaned", "child ended orphaned", 30_000).catch((e) => {
        console.log(JSON.stringify(sessionRecord(project.governanceDir, child), null, 1));
        console.log(
          auditEvents(project.governanceDir)
            .slice(-15)
            .map((x) => JSON.stringify(x))
            .join("\n"),
        );
        console.log(next.logs().slice(-3000));
        throw e;
      });
      const c = sessionRecord(project.governanceDir, child)!;
      expect(c.end).toMatchObject({ how: "orphaned", detail: `host process ${pid} ended` });
      await waitFor(() => sessionRecord(project.governanceDir, root)?.children[0]?.outcome === "orphaned", "parent link closed", 30_000);
      await waitFor(() => !fs.existsSync(path.join(project.governanceDir, "queues", child)), "child's queue swept", 30_000);
      const list = await projectCli(project, ["sessions"]);
      expect(list.stdout).not.toContain(child);
      const last = await projectCli(project, ["stop", child]);
      expect(last.code).toBe(1);
      expect(last.stderr).toMatch(/is not running \(orphaned/);
      expect(auditEvents(project.governanceDir).filter((e) => e.type === "session_stopped" && e.sessionId === child)).toEqual([]);
    } finally {
      await next.stop();
    }
    // Issue 43: the root's turn (its `task` call) was cut off by the crash. It is resumable at once — not after the
    // hour an idle root waits — and listed as cut off by a crash; its child stays ended.
    expect(sessionRecord(project.governanceDir, root)).toMatchObject({ control: "orphaned", end: { how: "orphaned" } });
    const listed = JSON.parse((await projectCli(project, ["resume", "--json"])).stdout) as { resumable: { sessionId: string }[] };
    expect(listed.resumable).toEqual([expect.objectContaining({ sessionId: root, crashed: true, interrupted: true })]);
    expect((await projectCli(project, ["resume"])).stdout).toContain("cut off by a crash");
    // `opencode run -s`: the first request of the resumed root carries the resume context; the new process takes it.
    const from = model.requests.length;
    const run = await runOpencode(project, ["-s", root, "--agent", "governance-coordinator", "CRASH-RESUME where were we?"]);
    expect(run.code, run.stderr.slice(-1500)).toBe(0);
    const step = model.requests.slice(from).find((r) => r.kind === "agent" && r.sessionId === root)!;
    expect(statusNote(step)).toContain("## Resumed Session (opencode-governance)");
    expect(statusNote(step)).toMatch(/interrupted/i);
    expect(auditEvents(project.governanceDir)).toContainEqual(expect.objectContaining({ type: "session_resumed", sessionId: root, cutOffByCrash: true }));
    expect(sessionRecord(project.governanceDir, root)).toMatchObject({ control: "active", end: null });
    expect(sessionRecord(project.governanceDir, child)!.control).toBe("orphaned");

    // Every lock the crashed process held was swept, and the processes after it released their own at exit. Checked
    // once they have exited: while one runs it may hold a record's lock for a moment as it writes (a fresh-clone run).
    expect(locksLeft(project.governanceDir)).toEqual([]);
  }, 180_000);
});
