import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { sweepDeadLocks, withFileLock } from "../../../governance/storage/file-lock.ts";
import { formatOwner, thisProcess } from "../../../governance/storage/lock-owner.ts";
import { ensureGovernanceDir, governancePaths, sessionFilePath } from "../../../governance/storage/governance-paths.ts";
import { makeRecord, sid, startWorker, tempDirEach, type Worker } from "../helpers.ts";
import { SessionStore } from "../../../governance/session/session-store.ts";
import { systemClock } from "../../../governance/time/clock.ts";

describe("withFileLock", () => {
  let dir: string;
  tempDirEach((d) => (dir = d), { worker: true });

  /** A worker process that holds (and keeps fresh) the lock of session `label`'s record; the record's path. */
  async function heldLock(label: string): Promise<{ file: string; holder: Worker; kill: () => Promise<void> }> {
    const id = sid(label);
    const holder = await startWorker("hold-lock", { projectDir: dir, sessionId: id });
    const kill = async () => {
      holder.child.kill("SIGKILL");
      await holder.exit;
    };
    try {
      await holder.ready;
    } catch (error) {
      await kill();
      throw error;
    }
    const file = sessionFilePath(governancePaths(dir), id);
    if (!file.ok) throw new Error(file.reason);
    return { file: file.path, holder, kill };
  }

  it("locks a path that does not exist yet, and removes the lock afterwards", async () => {
    const target = join(dir, "not-yet.json");
    const result = await withFileLock(target, async () => {
      expect(existsSync(`${target}.lock`)).toBe(true);
      return 7;
    });
    expect(result).toBe(7);
    expect(existsSync(`${target}.lock`)).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it("serializes critical sections in one process and releases after a throw", async () => {
    const target = join(dir, "x.json");
    let inside = 0;
    let maxInside = 0;
    const section = async (i: number) =>
      withFileLock(target, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inside--;
        if (i % 5 === 0) throw new Error(`boom ${i}`);
        return i;
      });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => section(i)));
    expect(maxInside).toBe(1);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(4);
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it("gives up with ELOCKED after maxWaitMs while a live process holds the lock", async () => {
    const { file, kill } = await heldLock("heldlock");
    try {
      await expect(withFileLock(file, async () => 1, { staleMs: 2_000, maxWaitMs: 300 })).rejects.toMatchObject({ code: "ELOCKED" });
    } finally {
      await kill();
    }
  });

  it("recovers a lock whose holder was killed (-9) once it goes stale", async () => {
    const { file, kill } = await heldLock("deadholder");
    await kill();
    expect(existsSync(`${file}.lock`)).toBe(true);
    const started = Date.now();
    const result = await withFileLock(file, async () => "recovered", { staleMs: 2_000 });
    const waited = Date.now() - started;
    expect(result).toBe("recovered");
    expect(waited).toBeLessThan(6_000);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it("takes a lock whose holder process is gone over at once, without waiting for it to go stale (issue 21 item 4)", async () => {
    const { file, holder, kill } = await heldLock("deadatonce");
    const owner = JSON.parse(readFileSync(join(`${file}.lock`, "owner"), "utf8"));
    expect(owner).toMatchObject({ pid: holder.child.pid, host: hostname() });
    await kill();
    const started = Date.now();
    // The default staleMs (10 s) would make this wait ~10 s if only staleness counted.
    expect(await withFileLock(file, async () => "taken", { maxWaitMs: 2_000 })).toBe("taken");
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(readdirSync(governancePaths(dir).sessions).filter((f) => f.includes(".lock"))).toEqual([]);
  });

  it("a holder killed (-9) at any moment never leaves a lock without its owner: the next one takes it at once (30 kills)", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    const id = sid("killedanytime");
    const file = sessionFilePath(paths, id);
    if (!file.ok) throw new Error(file.reason);
    await new SessionStore({ projectDir: dir, clock: systemClock }).update(id, () => makeRecord(id, Date.now()));
    for (let trial = 0; trial < 30; trial++) {
      const worker = await startWorker("loop-update", { projectDir: dir, sessionId: id });
      await worker.ready;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
      worker.child.kill("SIGKILL");
      await worker.exit;
      if (existsSync(`${file.path}.lock`)) {
        const owner = JSON.parse(readFileSync(join(`${file.path}.lock`, "owner"), "utf8"));
        expect(owner.pid).toBe(worker.child.pid);
      }
      const started = Date.now();
      // The default staleMs (10 s) is what an ownerless lock would cost.
      expect(await withFileLock(file.path, async () => "taken", { maxWaitMs: 3_000 })).toBe("taken");
      expect(Date.now() - started).toBeLessThan(1_500);
    }
    // What a kill mid-take or mid-release leaves beside the lock is swept (once older than staleMs).
    const leftovers = readdirSync(paths.sessions).filter((n) => /\.lock\.(new|stale)-/.test(n));
    for (const n of leftovers) utimesSync(join(paths.sessions, n), new Date(0), new Date(0));
    expect(await sweepDeadLocks(paths.sessions)).toBe(leftovers.length);
    expect(readdirSync(paths.sessions).filter((n) => n.includes(".lock"))).toEqual([]);
  }, 60_000);

  it("a lock naming a reused pid (same pid, another start time) is the dead holder's: taken over at once", async () => {
    const target = join(dir, "reused.json");
    mkdirSync(`${target}.lock`);
    const me = thisProcess();
    writeFileSync(join(`${target}.lock`, "owner"), formatOwner({ host: me.host, pid: process.pid, start: "1" }));
    expect(await withFileLock(target, async () => "taken", { maxWaitMs: 500 })).toBe("taken");
  });

  it("a lock whose owner file names this very process, which does not hold it, is a copy: taken over at once (issue 27)", async () => {
    const target = join(dir, "copied-owner.json");
    mkdirSync(`${target}.lock`);
    writeFileSync(join(`${target}.lock`, "owner"), thisProcess().text);
    const started = Date.now();
    expect(await withFileLock(target, async () => "taken", { maxWaitMs: 2_000 })).toBe("taken");
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("with maxHoldMs, a live holder that keeps its lock fresh is taken over once it has held it that long (issue 27)", async () => {
    const { file, kill } = await heldLock("heldlong");
    try {
      const started = Date.now();
      expect(await withFileLock(file, async () => "taken", { staleMs: 2_000, maxWaitMs: 5_000, maxHoldMs: 800 })).toBe("taken");
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(800);
      expect(waited).toBeLessThan(2_000);
    } finally {
      await kill();
    }
  });

  it("the periodic sweep never takes this process's own held lock for a copy", async () => {
    const target = join(dir, "own.json");
    await withFileLock(target, async () => {
      expect(await sweepDeadLocks(dir)).toBe(0);
      expect(existsSync(`${target}.lock`)).toBe(true);
    });
  });

  it("a fresh lock of a live process, of another host, or without an owner file is waited for, not taken", async () => {
    const me = thisProcess();
    const owners = [formatOwner({ host: me.host, pid: process.ppid, start: null }), formatOwner({ host: "other-host", pid: 999_999, start: null }), null];
    for (const [i, text] of owners.entries()) {
      const target = join(dir, `live-${i}.json`);
      mkdirSync(`${target}.lock`);
      if (text) writeFileSync(join(`${target}.lock`, "owner"), text);
      await expect(withFileLock(target, async () => 1, { staleMs: 2_000, maxWaitMs: 300 })).rejects.toMatchObject({ code: "ELOCKED" });
    }
  });

  it("holds one after another without a timer per hold: one shared refresher (issue 31)", async () => {
    const target = join(dir, "often.json");
    await withFileLock(target, async () => 0);
    const timeouts = vi.spyOn(globalThis, "setTimeout");
    const intervals = vi.spyOn(globalThis, "setInterval");
    try {
      for (let i = 0; i < 20; i++) await withFileLock(target, async () => i);
      // The refresher started by the first hold is still running: twenty more holds create no timer.
      expect(timeouts.mock.calls.length + intervals.mock.calls.length).toBe(0);
    } finally {
      timeouts.mockRestore();
      intervals.mockRestore();
    }
  });

  it("keeps a live holder's lock fresh past staleMs: a waiter gives up instead of taking it over", async () => {
    const { file, kill } = await heldLock("freshlock");
    try {
      // The holder's staleMs is 2 s: without its refresh the lock would look stale after 2 s of this 3.5 s wait.
      await expect(withFileLock(file, async () => 1, { staleMs: 2_000, maxWaitMs: 3_500 })).rejects.toMatchObject({ code: "ELOCKED" });
      expect(Date.now() - statSync(`${file}.lock`).mtimeMs).toBeLessThan(2_000);
    } finally {
      await kill();
    }
  });

  it("a hold that outlasts a refresh releases cleanly: not reported as taken over, the lock removed", async () => {
    const target = join(dir, "long.json");
    const lost: Error[] = [];
    // staleMs 2 s: the lock's mtime is refreshed at 1 s, while this hold still runs.
    await withFileLock(target, () => new Promise((resolve) => setTimeout(resolve, 1_300)), { staleMs: 2_000, onCompromised: (e) => lost.push(e) });
    expect(lost).toEqual([]);
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it("takes over a lock dated in the future (clock change, hand-made folder) instead of waiting forever", async () => {
    const target = join(dir, "future.json");
    mkdirSync(`${target}.lock`);
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(`${target}.lock`, future, future);
    expect(await withFileLock(target, async () => "taken", { staleMs: 2_000, maxWaitMs: 500 })).toBe("taken");
    expect(readdirSync(dir)).toEqual([]);
  });

  it("reports a lock taken over while held, and leaves the new holder's lock in place", async () => {
    const target = join(dir, "taken.json");
    // The same lock through another path (a linked folder): a second holder as another process would be one.
    symlinkSync(dir, join(dir, "via"));
    const lost: Error[] = [];
    let letOtherGo: () => void = () => undefined;
    let other: Promise<string> | undefined;
    await withFileLock(
      target,
      async () => {
        // This holder froze: its lock has not been refreshed for an hour. The other takes it over and keeps it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const past = new Date(Date.now() - 3_600_000);
        utimesSync(`${target}.lock`, past, past);
        const holding = new Promise<void>((resolve) => (letOtherGo = resolve));
        let inside: () => void = () => undefined;
        const entered = new Promise<void>((resolve) => (inside = resolve));
        other = withFileLock(join(dir, "via", "taken.json"), async () => {
          inside();
          await holding;
          return "other";
        });
        await entered;
      },
      { onCompromised: (e) => lost.push(e) },
    );
    expect(lost.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(["ECOMPROMISED"]);
    expect(existsSync(`${target}.lock`)).toBe(true);
    letOtherGo();
    expect(await other).toBe("other");
    expect(existsSync(`${target}.lock`)).toBe(false);
  });

  it("fails at once on an error that waiting cannot fix (the folder is missing)", async () => {
    const started = Date.now();
    await expect(withFileLock(join(dir, "no", "such", "x.json"), async () => 1)).rejects.toMatchObject({ code: "ENOENT" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
