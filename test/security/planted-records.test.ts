import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { e2eHost, projectCli, runOpencode, textOf } from "../harness/index.ts";

/**
 * Issue 20 §3 on the real `opencode`: a repository force-adds 3,000 "running" records under the git-ignored state
 * folder. What the model reads from the `governance` tool, what `sessions` prints and what `stop general` does must
 * not be theirs: the user's real session is listed, the planted ones are only counted, and nothing planted is
 * stopped by agent name. Planted records carry no attestation of this user's key (governance/storage/record-attestation.ts).
 */
const PLANTED = 3_000;
const planted = (i: number) => `ses_planted${String(i).padStart(16, "0")}`;

describe("planted records cannot crowd out or be steered as the user's sessions (real opencode)", () => {
  let toolResult = "";
  const { model, project } = e2eHost({
    respond: (req) => {
      const tool = req.messages.find((m) => m.role === "tool");
      if (!tool) return { toolCalls: [{ name: "governance", args: { action: "sessions" } }] };
      toolResult = textOf(tool.content);
      return { text: "listed" };
    },
    serve: false,
  });

  beforeAll(() => {
    const sessions = path.join(project.governanceDir, "sessions");
    fs.mkdirSync(sessions, { recursive: true });
    const now = Date.now();
    for (let i = 0; i < PLANTED; i++) {
      const id = planted(i);
      const record = {
        schemaVersion: 1,
        sessionId: id,
        parentId: null,
        rootId: id,
        level: 1,
        depth: 0,
        agent: "general",
        state: "beginning",
        control: "active",
      };
      fs.writeFileSync(path.join(sessions, `${id}.json`), JSON.stringify({ ...record, createdAt: now, updatedAt: now, lastActivityAt: now }));
    }
  }, 60_000);

  test("the governance tool lists the user's running session and counts the planted ones; it stays small", async () => {
    const run = await runOpencode(project, ["list the sessions"], { timeoutMs: 90_000 });
    expect(run.code, run.stderr.slice(-1000)).toBe(0);
    const real = model.requests.find((r) => r.kind === "agent")?.sessionId;
    expect(real).toMatch(/^ses_/);
    expect(toolResult).toContain(real!);
    expect(toolResult).not.toContain("ses_planted");
    expect(toolResult).toContain(`(${PLANTED} records in the state folder not written by this user's governance`);
    expect(toolResult.length).toBeLessThan(2_000);
    console.log(`governance tool result with ${PLANTED} planted records: ${toolResult.length} characters; opencode run ${run.ms} ms`);
  }, 120_000);

  test("`stop general` stops nothing planted; `sessions` and `status` count them apart", async () => {
    const started = Date.now();
    const stop = await projectCli(project, ["stop", "general", "--level", "3"]);
    const ms = Date.now() - started;
    expect(stop.code).toBe(1);
    expect(stop.stderr).toContain('no running session of agent "general"');
    expect(fs.existsSync(path.join(project.governanceDir, "queues", planted(0)))).toBe(false);
    const byId = await projectCli(project, ["stop", planted(7)]);
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain("not one this user's governance recorded");
    const list = await projectCli(project, ["sessions", "--all"]);
    expect(list.stdout).not.toContain("ses_planted");
    expect(list.stdout).toContain(`(${PLANTED} records in the state folder not written by this user's governance`);
    const status = JSON.parse((await projectCli(project, ["status", "--json"])).stdout) as { sessions: { active: number; unverified: number } };
    expect(status.sessions.unverified).toBe(PLANTED);
    expect(status.sessions.active).toBeLessThanOrEqual(1);
    console.log(`stop general over ${PLANTED} planted records: ${ms} ms (the CLI's start included)`);
  }, 120_000);
});
