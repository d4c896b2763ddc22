import { appendFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { EMPTY_BUDGET } from "../../governance/session/budget-state.ts";
import { governancePaths } from "../../governance/storage/governance-paths.ts";
import { cliProjects } from "./cli-project.ts";
import { runCli } from "./run-cli.ts";

const ROOT = "ses_1root00000000000000000BBB";
const CHILD = "ses_2child0000000000000000BBB";
const project = cliProjects();

const child = { parentId: ROOT, rootId: ROOT, depth: 1, level: 2, agent: "worker" };
const userStop = (requestedBy: string) => ({
  requestId: "stop-1",
  requestedAt: Date.now() - 5000,
  reason: "enough",
  requestedBy,
  nextLevel: 3 as const,
  delivered: [1 as const],
  deadlineAt: Date.now() + 60_000,
  quietMs: null,
  capAt: null,
  abortAttempts: 0,
  parentNotified: false,
});

/** Durations read as people read them in every CLI output (issue 39): `6s/2h` in `status`, so `budget` too. */
describe("budget: durations are human", () => {
  it("`budget <id>` prints activeTime as a duration (6s of 2h), never milliseconds", async () => {
    const p = await project();
    await p.put({ sessionId: ROOT });
    await p.put({ sessionId: CHILD, ...child, budget: { ...EMPTY_BUDGET, activeMs: 6_000 } });
    const res = await runCli(["budget", CHILD], { cwd: p.dir });
    expect(res.code).toBe(0);
    const line = res.stdout.split("\n").find((l) => l.trim().startsWith("activeTime")) ?? "";
    expect(line).toMatch(/activeTime\s+6s of 2h \(0%\)/);
    expect(res.stdout).not.toMatch(/6000|7200000/);
    // The same figure `status` shows for it.
    const status = await runCli(["status"], { cwd: p.dir });
    expect(status.stdout).toContain("activeTime 6s/2h");
  });

  it("`budget --add activeTime=10m` confirms in the units typed, not milliseconds", async () => {
    const p = await project();
    await p.put({ sessionId: ROOT });
    await p.put({ sessionId: CHILD, ...child });
    const res = await runCli(["budget", CHILD, "--add", "activeTime=10m", "--add", "toolCalls=50"], { cwd: p.dir });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/: toolCalls \+50, activeTime \+10m$/m);
    expect(res.stdout).not.toContain("600000");
  });

  it("`log` prints an activeTime budget's use and limit and *Ms fields as durations; --json keeps milliseconds", async () => {
    const p = await project();
    await p.put({ sessionId: ROOT });
    const event = { at: Date.now(), type: "budget_exceeded", sessionId: CHILD, scope: "session", key: "activeTime", used: 7_260_000, limit: 7_200_000 };
    const started = { at: Date.now(), type: "plugin_started", startupMs: 350 };
    await appendFile(governancePaths(p.dir).auditLog, `${JSON.stringify(event)}\n${JSON.stringify(started)}\n`);
    const res = await runCli(["log"], { cwd: p.dir });
    expect(res.stdout).toContain("used=2h limit=2h");
    expect(res.stdout).toContain("startupMs=350ms");
    expect(res.stdout).not.toMatch(/7260000|7200000/);
    const json = await runCli(["log", "--json"], { cwd: p.dir });
    expect(json.stdout).toContain('"used":7260000');
  });
});

describe("stop: durations are human", () => {
  it("refusing an idle session says how long ago its turn ended in hours and minutes, not seconds", async () => {
    const p = await project();
    const idleAt = Date.now() - (2 * 3600 + 5 * 60) * 1000;
    await p.put({ sessionId: ROOT, idleAt, lastActivityAt: idleAt });
    const res = await runCli(["stop", ROOT], { cwd: p.dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("its turn ended 2 hours 5 minutes ago");
  });
});

/** A raise does not undo the user's own stop (issue 39): said, non-zero, nothing queued. */
describe("budget --add on a session the user stopped", () => {
  for (const control of ["stopped", "stopping"] as const) {
    it(`is refused for a ${control} session: says so and what to do instead, exit 1, nothing written`, async () => {
      const p = await project();
      await p.put({ sessionId: ROOT });
      await p.put({ sessionId: CHILD, ...child, control, stop: userStop("cli:alice") });
      const before = await p.queued(CHILD);
      const res = await runCli(["budget", CHILD, "--add", "toolCalls=50"], { cwd: p.dir });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`session ${CHILD} ${control === "stopped" ? "was stopped" : "is being stopped"} by cli:alice`);
      expect(res.stderr).toMatch(/does not undo a stop.*delegate it again, or start a new session/);
      expect(await p.queued(CHILD)).toEqual(before);
      const log = await runCli(["log", "--type", "budget_raised"], { cwd: p.dir });
      expect(log.stdout).toBe("");
    });
  }

  it("--tree on a tree whose root the user stopped is refused too", async () => {
    const p = await project();
    await p.put({ sessionId: ROOT, control: "stopped", stop: userStop("dashboard") });
    await p.put({ sessionId: CHILD, ...child });
    const res = await runCli(["budget", CHILD, "--tree", "--add", "toolCalls=50"], { cwd: p.dir });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`session ${ROOT} was stopped by dashboard`);
    expect(await p.queued(ROOT)).toEqual([]);
  });

  it("a session governance stopped for its budget is still raised (that is what a raise is for)", async () => {
    const p = await project();
    await p.put({ sessionId: ROOT });
    await p.put({ sessionId: CHILD, ...child, control: "stopped", stop: { ...userStop("governance"), requestId: "budget-1" } });
    const res = await runCli(["budget", CHILD, "--add", "toolCalls=50"], { cwd: p.dir });
    expect(res.code).toBe(0);
    expect(await p.queued(CHILD)).toHaveLength(1);
  });
});
