import { afterAll, describe, expect, test } from "vitest";
import { STOP_HEADINGS } from "../../governance/texts/stop-directives.ts";
import { auditEvents, e2eHost, Gate, type ModelRequest, projectCli, type Reply, sessionRecord, textOf, toolTexts, waitFor } from "../harness/index.ts";

/**
 * Issue 32: the user knows a session by the title OpenCode shows, not by its id. On the real binary: the records keep
 * OpenCode's titles (a subagent's is its task description, a root's the generated one, a rename follows), `sessions`
 * shows them, and `stop <part of a title>` stops the one session it names — or, naming several, stops none and lists them.
 */
const MIGRATE = "Migrate the billing database";
const AUDIT = "Audit the billing reports";
const titleOf = (task: string) => `${task} (@governance-executor subagent)`;

describe("session titles on the real binary: shown, and a title fragment as the stop target", () => {
  const gates = new Map<string, Gate>();
  const gateOf = (id = "?") => gates.get(id) ?? gates.set(id, new Gate()).get(id)!;
  let step = 0;

  async function respond(req: ModelRequest): Promise<Reply> {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = toolTexts(req).length;
    const task = /^PARENT (.+)$/.exec(first)?.[1];
    if (task) {
      if (tools === 0)
        return { toolCalls: [{ name: "task", args: { description: task, prompt: "CHILD-LOOP keep reading", subagent_type: "governance-executor" } }] };
      return { text: "parent done" };
    }
    if (first.includes("CHILD-LOOP")) {
      if (tools > 0) await gateOf(req.sessionId).wait();
      step++;
      return { toolCalls: [{ name: "read", args: { filePath: `${project.dir}/notes-${step % 2}.txt` } }] };
    }
    return { text: "ok" };
  }

  const { project, serve, stepsOf } = e2eHost({
    respond,
    agents: true,
    governanceYaml: "loops:\n  enabled: false\n",
    files: { "notes-0.txt": "even\n", "notes-1.txt": "odd\n" },
  });
  afterAll(async () => {
    for (const g of gates.values()) g.releaseAll();
  });

  async function runningChild(task: string): Promise<{ parent: string; child: string }> {
    const parent = (await serve.http.createSession()).id;
    await serve.http.promptAsync(parent, `PARENT ${task}`, { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(parent))[0]?.id, `child of "${task}"`, 60_000);
    await waitFor(() => stepsOf(child).length >= 2, `"${task}" waiting at its second step`, 60_000);
    return { parent, child };
  }

  test("records keep OpenCode's titles and follow a rename; `sessions` shows them; a title fragment stops exactly the session it names", async () => {
    const migrate = await runningChild(MIGRATE);
    const audit = await runningChild(AUDIT);

    // OpenCode titles a subagent's session with its task; the record keeps it from session.created.
    expect(sessionRecord(project.governanceDir, migrate.child)?.title).toBe(titleOf(MIGRATE));
    expect(sessionRecord(project.governanceDir, audit.child)?.title).toBe(titleOf(AUDIT));
    // A root's title is generated after its first prompt (session.updated), and a rename is followed.
    await waitFor(() => sessionRecord(project.governanceDir, migrate.parent)?.title === "Scripted session", "the root's generated title", 30_000);
    await serve.http.rename(migrate.parent, "Billing work, part 1");
    await waitFor(() => sessionRecord(project.governanceDir, migrate.parent)?.title === "Billing work, part 1", "the renamed title", 30_000);

    const listed = await projectCli(project, ["sessions"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${migrate.child}  "${titleOf(MIGRATE)}"  governance-executor`);
    expect(listed.stdout).toContain(`${migrate.parent}  "Billing work, part 1"  governance-coordinator`);
    const json = JSON.parse((await projectCli(project, ["sessions", "--json"])).stdout) as { sessions: { sessionId: string; title: string | null }[] };
    expect(json.sessions.find((s) => s.sessionId === audit.child)?.title).toBe(titleOf(AUDIT));

    // "billing" is in three running sessions' titles (the renamed root and both subagents): refused, nothing queued, the candidates listed with their ids and titles.
    const ambiguous = await projectCli(project, ["stop", "billing"]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('"billing" is in the titles of 3 running sessions');
    for (const s of [migrate.child, audit.child]) expect(ambiguous.stderr).toContain(s);
    expect(ambiguous.stderr).toContain(`"${titleOf(AUDIT)}"`);
    const asJson = JSON.parse((await projectCli(project, ["stop", "BILLING", "--json"])).stdout) as { ok: boolean; candidates: { sessionId: string }[] };
    expect(asJson.ok).toBe(false);
    expect(asJson.candidates.map((c) => c.sessionId).sort()).toEqual([migrate.parent, migrate.child, audit.child].sort());
    expect(auditEvents(project.governanceDir).filter((e) => e.type === "stop_queued")).toEqual([]);

    // "billing database" names one: that subagent is stopped (L1 on its next tool result), the other runs on.
    const stopped = await projectCli(project, ["stop", "billing database", "--reason", "wrong schema"]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain(`stop begun (level 1) for ${migrate.child}`);
    await waitFor(() => sessionRecord(project.governanceDir, migrate.child)?.control === "stopping", "the plugin took the stop", 30_000);
    const before = stepsOf(migrate.child).length;
    gateOf(migrate.child).release();
    const next = await waitFor(() => stepsOf(migrate.child)[before], "the stopped child's next step", 60_000);
    expect(toolTexts(next).at(-1)).toContain(STOP_HEADINGS[1]);
    expect(toolTexts(next).at(-1)).toContain("wrong schema");
    expect(sessionRecord(project.governanceDir, audit.child)?.control).toBe("active");
    expect(
      auditEvents(project.governanceDir)
        .filter((e) => e.type === "stop_queued")
        .map((e) => e.sessionId),
    ).toEqual([migrate.child]);
  });
});
