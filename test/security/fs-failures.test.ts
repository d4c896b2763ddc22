import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makeRecord } from "../governance/fixtures/records.ts";
import { recordTrust } from "../../governance/storage/record-attestation.ts";
import { makeTempDir } from "../governance/helpers.ts";
import { claimAll, enqueue, peekAll } from "../../governance/stop/directive-queue.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { ensureGovernanceDir, governancePaths } from "../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { createFakeClock } from "../../governance/time/clock.ts";
import { CLI_ENTRY } from "../harness/paths.ts";
import { assertCliBuilt, runCli } from "../cli/run-cli.ts";

/**
 * Issue 8 §4: a state folder that cannot be written (root-owned after one `sudo opencode`, a read-only or full file
 * system) must not stall anything. Each case uses a failure that is real for the user running the test: as a normal
 * user `chmod 0555`; as root (which ignores modes) a read-only tmpfs mounted over the state folder, a full tmpfs,
 * and the CLI run as `nobody` through `setpriv` against root-owned state. The wait of every hook-path operation is
 * measured and printed; a lock used to retry EACCES for ~25 s.
 */

const A = "ses_readable0000000000000001";
const B = "ses_readable0000000000000002";
/** What a hook may wait for an answer from the store, in ms (issue 8 §4). */
const HOOK_BUDGET_MS = 100;
const IS_ROOT = process.getuid?.() === 0;

function canMount(): boolean {
  if (!IS_ROOT) return false;
  const probe = execFileSync("mktemp", ["-d"]).toString().trim();
  const ok = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).status === 0;
  if (ok) spawnSync("umount", [probe]);
  rmSync(probe, { recursive: true, force: true });
  return ok;
}
const MOUNT = canMount();

/** Makes `dir` unwritable for this process in a way the kernel enforces; returns how, and how to undo it. */
function makeUnwritable(dir: string): { how: string; undo: () => void } {
  if (!IS_ROOT) {
    const folders = [
      dir,
      ...readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(e.parentPath, e.name)),
    ];
    for (const f of folders) chmodSync(f, 0o555);
    return { how: "chmod 0555", undo: () => folders.forEach((f) => chmodSync(f, 0o755)) };
  }
  const staging = `${dir}.staging`;
  cpSync(dir, staging, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", dir]);
  cpSync(staging, dir, { recursive: true });
  execFileSync("mount", ["-o", "remount,ro", dir]);
  return { how: "read-only tmpfs (root ignores chmod)", undo: () => execFileSync("umount", [dir]) };
}

async function timed<T>(op: () => Promise<T>): Promise<{ ms: number; value?: T; error?: NodeJS.ErrnoException }> {
  const started = performance.now();
  try {
    const value = await op();
    return { ms: performance.now() - started, value };
  } catch (error) {
    return { ms: performance.now() - started, error: error as NodeJS.ErrnoException };
  }
}

async function governedProject(dir: string): Promise<void> {
  writeFileSync(join(dir, "opencode.json"), "{}\n");
  const clock = createFakeClock(Date.now());
  const store = new SessionStore({ projectDir: dir, clock });
  // Attested with this user's key, as the plugin writes them (governance/storage/record-attestation.ts).
  const trust = recordTrust();
  for (const id of [A, B])
    await store.update(id, () =>
      makeRecord({ sessionId: id, createdAt: clock.now(), updatedAt: clock.now(), lastActivityAt: clock.now(), attest: trust.attest(id) ?? null }),
    );
  await new AuditLog({ paths: store.paths, clock }).append("plugin_started");
}

describe("fail fast, degrade gracefully (issue 8 §4)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(() => assertCliBuilt());
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("gov-fs-")));
  afterEach(() => cleanup());

  it.runIf(!IS_ROOT || MOUNT)("an unwritable state folder: every write ends at once with a report, reads still list", async () => {
    await governedProject(dir);
    const paths = governancePaths(dir);
    const { how, undo } = makeUnwritable(paths.root);
    try {
      const problems: StoreProblem[] = [];
      const clock = createFakeClock(Date.now());
      const store = new SessionStore({ projectDir: dir, clock, onProblem: (p) => problems.push(p) });
      const audit = new AuditLog({ paths, clock, onProblem: (p) => problems.push(p) });
      const waits = {
        "store.update (tool.execute.before)": await timed(() => store.update(A, (r) => r && { ...r, counters: { ...r.counters, toolCalls: 9 } })),
        "store.update of a new session": await timed(() =>
          store.update("ses_new0000000000000000000001", () => makeRecord({ sessionId: "ses_new0000000000000000000001" })),
        ),
        "audit.append": await timed(() => audit.append("session_created", { sessionId: A })),
        "enqueue (stop)": await timed(() => enqueue(paths, A, { kind: "stop", id: "s1", at: 1, level: 1, reason: "r", by: "t" })),
        claimAll: await timed(() => claimAll(paths, A)),
      };
      console.log(
        `[fs-failures] ${how}: hook-path waits (ms): ${Object.entries(waits)
          .map(([k, v]) => `${k} ${v.ms.toFixed(1)}`)
          .join(", ")}`,
      );
      for (const [what, result] of Object.entries(waits)) expect(result.ms, what).toBeLessThanOrEqual(HOOK_BUDGET_MS);
      expect(waits["store.update (tool.execute.before)"].error?.code).toMatch(/^(EACCES|EPERM|EROFS)$/);
      expect(waits["audit.append"].value).toMatchObject({ ok: false });
      expect(problems.length).toBeGreaterThan(0);

      const listed = await timed(() => store.list());
      expect(listed.value?.map((r) => r.sessionId).sort()).toEqual([A, B]);
      const sessions = await runCli(["sessions", "--all", "--dir", dir], { cwd: dir });
      expect(sessions.code, sessions.stderr).toBe(0);
      expect(sessions.stdout).toContain(A);
      expect(sessions.stdout).toContain(B);
      const started = performance.now();
      const stop = await runCli(["stop", A, "--dir", dir], { cwd: dir });
      console.log(`[fs-failures] ${how}: CLI stop refused in ${(performance.now() - started).toFixed(0)} ms (process start included): ${stop.stderr.trim()}`);
      expect(stop.code).not.toBe(0);
      expect(stop.stderr).toMatch(/EACCES|EPERM|EROFS|permission denied|read-only/i);
      const status = await runCli(["status", "--dir", dir], { cwd: dir });
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/state folder: .*(EACCES|EROFS|permission denied|read-only)/i);
      const doctor = await runCli(["doctor", "--dir", dir], { cwd: dir });
      expect(doctor.code).toBe(1);
      expect(doctor.stdout).toMatch(/✗ state folder: /);
    } finally {
      undo();
    }
  });

  it.runIf(IS_ROOT)("root-owned state after `sudo opencode`, CLI run as nobody: lists what it can read, refuses writes at once", async () => {
    chmodSync(dir, 0o755);
    await governedProject(dir);
    const paths = governancePaths(dir);
    // An older release wrote 0644/0755; this one writes 0600/0700. One record of each: the readable one is listed.
    for (const folder of [join(dir, ".opencode"), paths.root, paths.sessions, paths.queues, paths.quarantine, paths.archive]) chmodSync(folder, 0o755);
    chmodSync(join(paths.sessions, `${A}.json`), 0o644);
    chmodSync(paths.auditLog, 0o644);
    const asNobody = (...args: string[]) => {
      const started = performance.now();
      const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, CLI_ENTRY, ...args, "--dir", dir], {
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", HOME: "/tmp" },
        timeout: 20_000,
      });
      return { ...r, ms: performance.now() - started };
    };
    const sessions = asNobody("sessions", "--all");
    expect(sessions.status, sessions.stderr).toBe(0);
    // A is readable but root's (attested with root's key, not this user's): counted, not listed as theirs; B's read
    // failure is reported.
    expect(sessions.stdout).not.toContain(A);
    expect(sessions.stdout).toContain("(1 record in the state folder not written by this user's governance");
    expect(sessions.stdout).not.toContain(B);
    expect(sessions.stderr).toMatch(new RegExp(`${B}.json.*(EACCES|permission denied)`));
    const stop = asNobody("stop", A);
    console.log(
      `[fs-failures] nobody vs root-owned state: sessions exit ${sessions.status} in ${sessions.ms.toFixed(0)} ms, stop exit ${stop.status} in ${stop.ms.toFixed(0)} ms: ${stop.stderr.trim()}`,
    );
    expect(stop.status).not.toBe(0);
    expect(stop.stderr).toMatch(/not one this user's governance recorded|EACCES|permission denied/i);
    const doctor = asNobody("doctor");
    expect(doctor.status).toBe(1);
    expect(doctor.stdout).toMatch(/✗ state folder: .*(EACCES|permission denied)/);
    expect(readdirSync(join(paths.queues))).toEqual([]);
  });

  it.runIf(MOUNT)("a full disk: a torn audit line never glues to the next one, and the failure is immediate", async () => {
    const paths = governancePaths(dir);
    mkdirSync(paths.root, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", paths.root]);
    try {
      await ensureGovernanceDir(paths);
      const problems: StoreProblem[] = [];
      const audit = new AuditLog({ paths, clock: createFakeClock(1), onProblem: (p) => problems.push(p) });
      expect(await audit.append("plugin_started")).toEqual({ ok: true });
      // Fill the file system, leaving less than one audit line of room.
      const filler = join(paths.root, "filler");
      try {
        writeFileSync(filler, Buffer.alloc(64 * 1024));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
      }
      const big = "x".repeat(8_000);
      let failed: Awaited<ReturnType<typeof timed>> | undefined;
      for (let i = 0; i < 20 && !failed; i++) {
        const r = await timed(() => audit.append("session_created", { sessionId: A, note: big, i }));
        if ((r.value as { ok: boolean }).ok === false) failed = r;
      }
      expect(failed, "the disk never filled").toBeDefined();
      console.log(`[fs-failures] ENOSPC: failed audit append returned in ${failed!.ms.toFixed(1)} ms: ${(failed!.value as { reason: string }).reason}`);
      expect(failed!.ms).toBeLessThanOrEqual(HOOK_BUDGET_MS);
      rmSync(filler, { force: true });
      expect(await audit.append("session_stopped", { sessionId: B })).toEqual({ ok: true });
      const lines = readFileSync(paths.auditLog, "utf8").split("\n");
      for (const line of lines) expect(line.indexOf('{"at":', 1), line.slice(0, 80)).toBe(-1);
      const events = await audit.read();
      expect(events.at(-1)).toMatchObject({ type: "session_stopped", sessionId: B });
      expect(problems.some((p) => p.kind === "io_error")).toBe(true);
    } finally {
      execFileSync("umount", [paths.root]);
    }
  });
});

describe("a directory, FIFO or symlink where a queue file is expected (issue 8 §4)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir("gov-queue-")));
  afterEach(() => cleanup());

  it("skips that one entry: the other directives are delivered in order, nothing is stuck or lost", async () => {
    const paths = governancePaths(dir);
    const clock = createFakeClock(1_700_000_000_000);
    const first = await enqueue(paths, A, { kind: "inject", id: "one", at: 1, text: "first", by: "t" });
    expect(first.ok).toBe(true);
    const queue = join(paths.queues, A);
    mkdirSync(join(queue, "000000000000002-00000000-1-00000000.json"));
    execFileSync("mkfifo", [join(queue, "000000000000003-00000000-1-00000000.json")]);
    await enqueue(paths, A, { kind: "stop", id: "two", at: 4, level: 1, reason: "r", by: "t" });
    expect((await peekAll(paths, A)).map((d) => d.id)).toEqual(["one", "two"]);
    const problems: StoreProblem[] = [];
    const claimed = await timed(() => claimAll(paths, A, { clock, onProblem: (p) => problems.push(p) }));
    expect(claimed.error).toBeUndefined();
    expect(claimed.value!.map((d) => d.id)).toEqual(["one", "two"]);
    expect(problems.map((p) => p.kind)).toEqual(["quarantined", "quarantined"]);
    expect(await claimAll(paths, A)).toEqual([]);
    await enqueue(paths, A, { kind: "inject", id: "three", at: 5, text: "later", by: "t" });
    expect((await claimAll(paths, A)).map((d) => d.id)).toEqual(["three"]);
    expect(existsSync(join(queue, ".claimed")) ? readdirSync(join(queue, ".claimed")) : []).toEqual([]);
  });
});

afterAll(() => undefined);
