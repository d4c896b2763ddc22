import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { thisProcess } from "../../governance/storage/lock-owner.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { assertCliBuilt, runCli } from "./run-cli.ts";

const IDLE_ROOT = "ses_1idle00000000000000000CCC";
const LIVE_ROOT = "ses_2live00000000000000000CCC";
const DEAD_CHILD = "ses_3dead00000000000000000CCC";
const DONE_CHILD = "ses_4done00000000000000000CCC";

let p: CliProject;
beforeAll(async () => {
  assertCliBuilt();
  p = await createCliProject();
  const now = Date.now();
  // A process that has exited: its pid runs nothing now (what a crash or a kill leaves in a record).
  const deadPid = spawnSync("true").pid ?? 999_999;
  const { host, pid, start } = thisProcess();
  await p.put({ sessionId: IDLE_ROOT, idleAt: now, hostedBy: { host, pid, start } });
  await p.put({ sessionId: LIVE_ROOT, hostedBy: { host, pid, start } });
  await p.put({ sessionId: DEAD_CHILD, parentId: IDLE_ROOT, rootId: IDLE_ROOT, depth: 1, level: 2, hostedBy: { host: hostname(), pid: deadPid, start: "1" } });
  await p.put({
    sessionId: DONE_CHILD,
    parentId: IDLE_ROOT,
    rootId: IDLE_ROOT,
    depth: 1,
    level: 2,
    control: "completed",
    end: { at: now, how: "completed", detail: null },
  });
});
afterAll(() => p?.cleanup());

/** `status` headline (issue 39): "running" is a turn under way in a live process, nothing else. */
describe("status counts", () => {
  it("text: only the live mid-turn session is running; an idle root is idle, a dead process's record orphaned", async () => {
    const res = await runCli(["status"], { cwd: p.dir });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain("sessions: 1 running now; 4 recorded: 1 running, 1 idle, 1 orphaned, 1 completed");
  });

  it("--json: running and the count by status word next to the record count", async () => {
    const res = await runCli(["status", "--json"], { cwd: p.dir });
    const json = JSON.parse(res.stdout) as { sessions: Record<string, unknown> };
    expect(json.sessions).toMatchObject({ recorded: 4, running: 1, byStatus: { running: 1, idle: 1, orphaned: 1, completed: 1 } });
  });
});
