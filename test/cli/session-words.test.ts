import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSnapshot } from "../../cli/dashboard-snapshot.ts";
import { readConfig } from "../../cli/read-config.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { thisProcess } from "../../governance/storage/lock-owner.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { systemClock } from "../../governance/time/clock.ts";
import { createCliProject, type CliProject } from "./cli-project.ts";
import { cliOut } from "./in-process-cli.ts";

/**
 * One word per session on every surface (newcomer walk 3: `sessions --all` said `stopped` where the resumable list said
 * `interrupted`; `resume` printed the raw state `between_turn` for an idle root; a record whose process died counted
 * `orphaned` in `status` but listed `running` by `sessions` and the dashboard). Every surface takes its word from
 * `sessionStatus`: `sessions --all`, `sessions --json`, `status --json`'s counts, the dashboard's rows, and `resume`.
 */
const HOUR = 3_600_000;
const ids = {
  running: "ses_w1live000000000000000000W",
  idle: "ses_w2idle000000000000000000W",
  idleInWindow: "ses_w3idleold00000000000000W",
  orphanedByDeadProcess: "ses_w4dead000000000000000000W",
  stopped: "ses_w5stopped0000000000000W",
  interrupted: "ses_w6interrupted000000000W",
  orphanedByCrash: "ses_w7crashed0000000000000W",
} as const;
const expected: Record<string, string> = {
  [ids.running]: "running",
  [ids.idle]: "idle",
  [ids.idleInWindow]: "idle",
  [ids.orphanedByDeadProcess]: "orphaned",
  [ids.stopped]: "stopped",
  [ids.interrupted]: "interrupted",
  [ids.orphanedByCrash]: "orphaned",
};

let p: CliProject;
beforeAll(async () => {
  p = await createCliProject();
  const now = Date.now();
  const here = thisProcess();
  const deadPid = spawnSync("true").pid ?? 999_999;
  await p.put({ sessionId: ids.running, hostedBy: here });
  await p.put({ sessionId: ids.idle, idleAt: now, hostedBy: here });
  await p.put({ sessionId: ids.idleInWindow, idleAt: now - 2 * HOUR, lastActivityAt: now - 2 * HOUR, hostedBy: here });
  await p.put({ sessionId: ids.orphanedByDeadProcess, hostedBy: { host: hostname(), pid: deadPid, start: "1" } });
  // The walk's root stopped from the dashboard: its turn was aborted (interrupted) and its control is final.
  await p.put({ sessionId: ids.stopped, state: "interrupted", control: "stopped", interruptedAt: now, stoppedAt: now });
  await p.put({ sessionId: ids.interrupted, state: "interrupted", interruptedAt: now - 60_000, lastActivityAt: now - 60_000 });
  await p.put({ sessionId: ids.orphanedByCrash, control: "orphaned", end: { at: now, how: "orphaned", detail: null } });
});
afterAll(() => p?.cleanup());

const cli = (...args: string[]) => cliOut(p.dir, ...args);

describe("one word per session, whatever surface shows it", () => {
  it("sessions --all (text) and sessions --json", async () => {
    const text = await cli("sessions", "--all");
    for (const [id, word] of Object.entries(expected)) expect(new RegExp(`${id} .*depth 0  ${word}  last:`).test(text), `${id} in:\n${text}`).toBe(true);
    const json = JSON.parse(await cli("sessions", "--json")) as { sessions: { sessionId: string; status: string; running: boolean }[] };
    for (const s of json.sessions) {
      expect(s.status, s.sessionId).toBe(expected[s.sessionId]);
      expect(s.running, s.sessionId).toBe(s.status === "running");
    }
    // Without --all: only what really runs (a dead process's record is not offered as running).
    expect((await cli("sessions")).trim().split("\n")).toEqual([expect.stringContaining(ids.running)]);
  });

  it("status --json counts the same words", async () => {
    const json = JSON.parse(await cli("status", "--json")) as { sessions: { byStatus: Record<string, number> } };
    const counted: Record<string, number> = {};
    for (const word of Object.values(expected)) counted[word] = (counted[word] ?? 0) + 1;
    expect(json.sessions.byStatus).toEqual(counted);
  });

  it("the dashboard's rows and its resumable list, and `resume`", async () => {
    const store = new SessionStore({ projectDir: p.dir, clock: systemClock });
    const ctx = { paths: store.paths, store, audit: new AuditLog({ paths: store.paths, clock: systemClock }), clock: systemClock, by: "test" };
    const snap = await buildSnapshot(ctx, () => readConfig(store.paths.configFile));
    for (const row of snap.sessions) expect(row.status, row.sessionId).toBe(expected[row.sessionId]);
    // Resumable: the idle root in its window, the interrupted root, the root a crash cut off — never the stopped one.
    const words = Object.fromEntries(snap.resumable.map((r) => [r.sessionId, r.word]));
    expect(words).toEqual({
      [ids.idleInWindow]: "idle",
      [ids.interrupted]: "interrupted",
      [ids.orphanedByCrash]: "orphaned (cut off by a crash)",
    });
    const text = await cli("resume");
    expect(text).toMatch(/build, idle 2 hours/);
    expect(text).toContain("build, interrupted, idle");
    expect(text).toContain("build, orphaned (cut off by a crash), idle");
    expect(text).not.toContain("between_turn");
  });
});
