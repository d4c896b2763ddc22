import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isTempName } from "../../../governance/storage/atomic-write.ts";
import { createFakeClock, systemClock } from "../../../governance/time/clock.ts";
import { claimAll, enqueue, pendingCount, queueDir } from "../../../governance/stop/directive-queue.ts";
import { ensureGovernanceDir, governancePaths, sessionFilePath } from "../../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../../governance/storage/quarantine.ts";
import { SessionRecord } from "../../../governance/session/session-record.ts";
import { SessionStore } from "../../../governance/session/session-store.ts";
import { HOSTILE_IDS, makeRecord, sid, startWorker, walk, tempDirEach, goTogether, expectCleanExits } from "../helpers.ts";

const HOUR = 3_600_000;
const MINUTE = 60_000;

function filePath(projectDir: string, id: string): string {
  const file = sessionFilePath(governancePaths(projectDir), id);
  if (!file.ok) throw new Error(file.reason);
  return file.path;
}

const bump = (current: SessionRecord | undefined): SessionRecord => {
  if (!current) throw new Error("missing");
  return { ...current, counters: { ...current.counters, toolCalls: current.counters.toolCalls + 1 } };
};

describe("SessionStore", () => {
  let dir: string;
  tempDirEach((d) => (dir = d), { worker: true });

  describe("read, update, peek", () => {
    it("creates, updates and reads back a record; peek serves the last one without I/O", async () => {
      const clock = createFakeClock(1_000);
      const store = new SessionStore({ projectDir: dir, clock });
      const id = sid("basic001");
      expect(await store.read(id)).toBeUndefined();
      expect(store.peek(id)).toBeUndefined();
      const created = await store.update(id, (current) => current ?? makeRecord(id, clock.now()));
      expect(created?.sessionId).toBe(id);
      expect(store.peek(id)).toEqual(created);
      const bumped = await store.update(id, bump);
      expect(bumped?.counters.toolCalls).toBe(1);
      const other = new SessionStore({ projectDir: dir, clock });
      expect(await other.read(id)).toEqual(bumped);
      expect(JSON.parse(await readFile(filePath(dir, id), "utf8"))).toEqual(bumped);
      expect(await readFile(join(governancePaths(dir).root, ".gitignore"), "utf8")).toContain("*");
    });

    it("reuses its own last write while the file is unchanged, and reads any other writer's file (issue 31)", async () => {
      const clock = createFakeClock(1_000);
      const store = new SessionStore({ projectDir: dir, clock });
      const id = sid("reuse001");
      const written = await store.update(id, () => makeRecord(id, clock.now()));
      // Unchanged since this store wrote it: the updater gets the very record written (no read, no parse, no migration).
      let seen: SessionRecord | undefined;
      const spy = (then: (r: SessionRecord | undefined) => SessionRecord | undefined) => (current: SessionRecord | undefined) => {
        seen = current;
        return then(current);
      };
      const bumped = await store.update(id, spy(bump));
      expect(seen).toBe(written);
      expect(await store.read(id)).toBe(bumped);
      // Another writer's file — even the same bytes, written again — is read: it is not the file this store wrote.
      await writeFile(filePath(dir, id), await readFile(filePath(dir, id), "utf8"));
      await store.update(
        id,
        spy((current) => current),
      );
      expect(seen).not.toBe(bumped);
      expect(seen).toEqual(bumped);
      // Rewritten in place to the same size right after this store's write: the change is what the updater sees.
      expect((await store.update(id, bump))?.counters.toolCalls).toBe(2);
      await writeFile(filePath(dir, id), (await readFile(filePath(dir, id), "utf8")).replace('"toolCalls": 2', '"toolCalls": 8'));
      expect((await store.update(id, bump))?.counters.toolCalls).toBe(9);
    });

    it("skips the write when the updater returns undefined or the same object", async () => {
      const store = new SessionStore({ projectDir: dir, clock: systemClock });
      const id = sid("skip0001");
      expect(await store.update(id, () => undefined)).toBeUndefined();
      expect(existsSync(filePath(dir, id))).toBe(false);
      await store.update(id, () => makeRecord(id, 5));
      const before = await stat(filePath(dir, id));
      const same = await store.update(id, (current) => current);
      expect(same?.sessionId).toBe(id);
      expect(await store.update(id, () => undefined)).toEqual(same);
      expect((await stat(filePath(dir, id))).ino).toBe(before.ino);
    });

    it("hands out frozen records and rejects invalid results without writing", async () => {
      const store = new SessionStore({ projectDir: dir, clock: systemClock });
      const id = sid("frozen01");
      await store.update(id, () => makeRecord(id, 5));
      await expect(
        store.update(id, (current) => {
          current!.counters.toolCalls = 99;
          return current;
        }),
      ).rejects.toThrow(TypeError);
      await expect(store.update(id, (current) => ({ ...current!, level: 0 }))).rejects.toThrow();
      await expect(store.update(id, () => makeRecord(sid("another1"), 5))).rejects.toThrow(/returned a record of/);
      expect((await store.read(id))?.counters.toolCalls).toBe(0);
      expect(await readdir(governancePaths(dir).sessions)).toEqual([`${id}.json`]);
    });

    it("reads a v0 record through the migration (the file is rewritten only by the next update)", async () => {
      const paths = governancePaths(dir);
      await ensureGovernanceDir(paths);
      const id = sid("legacy01");
      const v0 = { sessionId: id, sessionLevel: 1, sessionState: "between_turn", lastUpdated: "2026-02-04T10:30:00Z" };
      await writeFile(filePath(dir, id), JSON.stringify(v0));
      const store = new SessionStore({ projectDir: dir, clock: systemClock });
      expect(await store.read(id)).toMatchObject({ schemaVersion: 2, level: 1, updatedAt: Date.parse(v0.lastUpdated) });
      expect(JSON.parse(await readFile(filePath(dir, id), "utf8"))).toEqual(v0);
      await store.update(id, bump);
      expect(JSON.parse(await readFile(filePath(dir, id), "utf8"))).toMatchObject({ schemaVersion: 2 });
    });
  });

  describe("corrupt files", () => {
    it("leaves a newer build's record in place: reported once, not listed, never quarantined or overwritten", async () => {
      const clock = createFakeClock(1_700_000_000_000);
      const problems: StoreProblem[] = [];
      const store = new SessionStore({ projectDir: dir, clock, onProblem: (p) => problems.push(p) });
      const id = sid("future01");
      await ensureGovernanceDir(governancePaths(dir));
      const text = JSON.stringify({ ...makeRecord(id, 1), schemaVersion: 3, fieldOfTheFuture: true });
      await writeFile(filePath(dir, id), text);

      expect(await store.list()).toEqual([]);
      expect(await store.read(id)).toBeUndefined();
      await expect(store.update(id, () => makeRecord(id, clock.now()))).rejects.toThrow(/newer opencode-governance/);
      expect(await readFile(filePath(dir, id), "utf8")).toBe(text);
      expect(await readdir(governancePaths(dir).quarantine)).toEqual([]);
      expect(problems).toEqual([expect.objectContaining({ kind: "io_error", reason: expect.stringMatching(/left in place: schemaVersion 3 .*newer/) })]);
    });

    it("quarantines every corrupt kind with a reason file, reports each once, and still loads the rest", async () => {
      const clock = createFakeClock(1_700_000_000_000);
      const problems: StoreProblem[] = [];
      const store = new SessionStore({ projectDir: dir, clock, onProblem: (p) => problems.push(p) });
      const good = sid("good0001");
      await store.update(good, () => makeRecord(good, clock.now()));
      const valid = JSON.stringify(makeRecord(sid("truncate"), 1));
      const corrupt: Record<string, string | Buffer> = {
        [sid("empty001")]: "",
        [sid("nulbytes")]: Buffer.alloc(512),
        [sid("truncate")]: valid.slice(0, Math.floor(valid.length / 2)),
        [sid("schema01")]: JSON.stringify({ schemaVersion: 1, sessionId: sid("schema01"), state: "flying" }),
        [sid("wrongid1")]: JSON.stringify(makeRecord(sid("someone2"), 1)),
      };
      for (const [id, content] of Object.entries(corrupt)) await writeFile(filePath(dir, id), content);

      const records = await store.list();
      expect(records.map((r) => r.sessionId)).toEqual([good]);
      expect(problems).toHaveLength(Object.keys(corrupt).length);
      const reasons = Object.fromEntries(problems.map((p) => [p.file.split("/").pop(), p.kind === "quarantined" ? p.reason : p.kind]));
      expect(reasons).toMatchObject({
        [`${sid("empty001")}.json`]: "empty file",
        [`${sid("nulbytes")}.json`]: expect.stringMatching(/NUL/),
        [`${sid("truncate")}.json`]: expect.stringMatching(/invalid JSON/),
        [`${sid("schema01")}.json`]: expect.stringMatching(/invalid v2 record/),
        [`${sid("wrongid1")}.json`]: expect.stringMatching(/file name says/),
      });

      const quarantine = governancePaths(dir).quarantine;
      for (const problem of problems) {
        if (problem.kind !== "quarantined") throw new Error("expected quarantine");
        const id = problem.file.split("/").pop()!.replace(".json", "");
        expect(await readFile(problem.movedTo)).toEqual(Buffer.from(corrupt[id]!));
        const note = JSON.parse(await readFile(`${problem.movedTo}.reason.json`, "utf8"));
        expect(note).toMatchObject({ reason: problem.reason, quarantinedAt: clock.now(), originalPath: problem.file });
        expect(existsSync(problem.file)).toBe(false);
      }
      expect(await readdir(quarantine)).toHaveLength(2 * Object.keys(corrupt).length);

      expect((await store.list()).map((r) => r.sessionId)).toEqual([good]);
      expect(problems).toHaveLength(Object.keys(corrupt).length);
    });

    it("read() quarantines a single bad file; update() then starts from undefined", async () => {
      const problems: StoreProblem[] = [];
      const store = new SessionStore({ projectDir: dir, clock: systemClock, onProblem: (p) => problems.push(p) });
      const id = sid("badread1");
      await ensureGovernanceDir(governancePaths(dir));
      await writeFile(filePath(dir, id), '{"schemaVersion":1,');
      expect(await store.read(id)).toBeUndefined();
      expect(problems).toHaveLength(1);
      await writeFile(filePath(dir, id), "\u0000\u0000");
      let seen: SessionRecord | undefined | "unset" = "unset";
      const rebuilt = await store.update(id, (current) => {
        seen = current;
        return makeRecord(id, 1);
      });
      expect(seen).toBeUndefined();
      expect(rebuilt?.sessionId).toBe(id);
      expect(problems).toHaveLength(2);
    });

    it("a throwing onProblem does not break the store", async () => {
      const store = new SessionStore({
        projectDir: dir,
        clock: systemClock,
        onProblem: () => {
          throw new Error("reporter down");
        },
      });
      await ensureGovernanceDir(governancePaths(dir));
      await writeFile(filePath(dir, sid("thrower1")), "");
      expect(await store.list()).toEqual([]);
    });
  });

  describe("hostile ids", () => {
    it("rejects every hostile id and never creates anything outside the governance folder", async () => {
      const projectDir = join(dir, "a", "b", "project");
      await mkdir(projectDir, { recursive: true });
      const paths = governancePaths(projectDir);
      const store = new SessionStore({ projectDir, clock: systemClock });
      await store.update(sid("legit001"), () => makeRecord(sid("legit001"), 1));
      for (const id of HOSTILE_IDS) {
        const asString = id as string;
        expect(await store.read(asString)).toBeUndefined();
        expect(store.peek(asString)).toBeUndefined();
        await expect(store.update(asString, () => makeRecord(sid("legit001"), 1))).rejects.toThrow(TypeError);
        expect(queueDir(paths, id).ok).toBe(false);
        const inject = { kind: "inject" as const, id: "d1", at: 1, text: "hi", by: "test" };
        expect((await enqueue(paths, asString, inject)).ok).toBe(false);
        await expect(claimAll(paths, asString)).rejects.toThrow(TypeError);
        await expect(pendingCount(paths, asString)).rejects.toThrow(TypeError);
      }
      const allowed = ["a", "a/b", "a/b/project", "a/b/project/.opencode"];
      for (const entry of await walk(dir)) {
        if (!allowed.includes(entry)) expect(entry.startsWith("a/b/project/.opencode/governance")).toBe(true);
      }
      expect(await readdir(paths.sessions)).toEqual([`${sid("legit001")}.json`]);
    });
  });

  describe("archiveStale", () => {
    const zones = ["UTC", "America/New_York", "Asia/Kathmandu"];
    const originalTz = process.env.TZ;
    afterEach(() => {
      if (originalTz === undefined) delete process.env.TZ;
      else process.env.TZ = originalTz;
    });

    it.each(zones)("moves records idle for more than 48 h to archive/ at the boundary (TZ=%s)", async (zone) => {
      process.env.TZ = zone;
      // 2026-03-08 is a DST switch in New York: epoch arithmetic must not care.
      const now = Date.UTC(2026, 2, 9, 6, 30);
      const clock = createFakeClock(now);
      const store = new SessionStore({ projectDir: dir, clock });
      const at =
        (ms: number, overrides: Partial<SessionRecord> = {}) =>
        (id: string) =>
          store.update(id, () => makeRecord(id, ms, overrides));
      await at(now - 48 * HOUR + MINUTE)(sid("stays001"));
      await at(now - 48 * HOUR - MINUTE)(sid("archived"));
      await at(now - 48 * HOUR)(sid("exactly1"));
      await at(now - 72 * HOUR, { lastActivityAt: now - HOUR })(sid("active01"));
      const archivedBytes = await readFile(filePath(dir, sid("archived")), "utf8");

      expect(await store.archiveStale(48 * HOUR)).toEqual([sid("archived")]);
      const paths = governancePaths(dir);
      expect(await readFile(join(paths.archive, `${sid("archived")}.json`), "utf8")).toBe(archivedBytes);
      expect(existsSync(filePath(dir, sid("archived")))).toBe(false);
      expect(store.peek(sid("archived"))).toBeUndefined();
      expect((await store.list()).map((r) => r.sessionId).sort()).toEqual([sid("stays001"), sid("exactly1"), sid("active01")].sort());
      expect(await store.archiveStale(48 * HOUR)).toEqual([]);

      clock.advance(2 * MINUTE);
      expect(await store.archiveStale(48 * HOUR)).toEqual([sid("stays001"), sid("exactly1")].sort());
    });

    it("never overwrites an earlier archive of the same session", async () => {
      const clock = createFakeClock(100 * HOUR);
      const store = new SessionStore({ projectDir: dir, clock });
      const id = sid("twice001");
      await store.update(id, () => makeRecord(id, 1));
      expect(await store.archiveStale(48 * HOUR)).toEqual([id]);
      await store.update(id, () => makeRecord(id, 2));
      expect(await store.archiveStale(48 * HOUR)).toEqual([id]);
      expect(await readdir(governancePaths(dir).archive)).toHaveLength(2);
    });
  });

  describe("several processes", () => {
    it("4 processes × 50 read-modify-write increments lose no update", async () => {
      const id = sid("counter1");
      const store = new SessionStore({ projectDir: dir, clock: systemClock });
      await store.update(id, () => makeRecord(id, Date.now()));
      const workers = await Promise.all(Array.from({ length: 4 }, () => startWorker("increment", { projectDir: dir, sessionId: id, count: 50 })));
      await goTogether(workers);
      await expectCleanExits(workers);
      expect((await store.read(id))?.counters.toolCalls).toBe(200);
      expect(await readdir(governancePaths(dir).sessions)).toEqual([`${id}.json`]);
    });

    it("kill -9 at random moments during updates never leaves a corrupt or half-written record (50 trials)", async () => {
      const lanes = 5;
      const trialsPerLane = 10;
      await Promise.all(
        Array.from({ length: lanes }, async (_, lane) => {
          const projectDir = join(dir, `lane${lane}`);
          const id = sid(`killlane${lane}`);
          const file = filePath(projectDir, id);
          const sessions = governancePaths(projectDir).sessions;
          await new SessionStore({ projectDir, clock: systemClock }).update(id, () => makeRecord(id, Date.now()));
          let last = 0;
          let lastPid = 0;
          for (let trial = 0; trial < trialsPerLane; trial++) {
            const worker = await startWorker("loop-update", { projectDir, sessionId: id });
            await worker.ready;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 40));
            worker.child.kill("SIGKILL");
            const exit = await worker.exit;
            expect(exit.signal, worker.stderr()).toBe("SIGKILL");
            lastPid = worker.child.pid!;

            const record = SessionRecord.parse(JSON.parse(await readFile(file, "utf8")));
            expect(record.counters.toolCalls).toBeGreaterThanOrEqual(last);
            last = record.counters.toolCalls;
            const names = await readdir(sessions);
            expect(names.filter((n) => n.endsWith(".json"))).toEqual([`${id}.json`]);
            // A lock being taken (`.lock.new-…`) or released (`.lock.stale-…`) when the kill came is left beside the
            // lock, never instead of it: the sweep removes them (file-lock.test.ts).
            const lockLeftover = (name: string) =>
              name === `${id}.json.lock` || name.startsWith(`${id}.json.lock.new-`) || name.startsWith(`${id}.json.lock.stale-`);
            for (const name of names) {
              expect(name === `${id}.json` || lockLeftover(name) || isTempName(name), name).toBe(true);
            }
            // The killed worker may still hold the lock; its takeover is covered in file-lock.test.ts.
            for (const name of names.filter(lockLeftover)) await rm(join(sessions, name), { recursive: true, force: true });
          }
          expect(last).toBeGreaterThanOrEqual(trialsPerLane);
          // A temp file of a dead writer (possibly left by the kills above) is ignored, then swept by the next store.
          await writeFile(join(sessions, `.${id}.json.${lastPid}.0123456789ab.tmp`), '{"half":');
          const fresh = new SessionStore({ projectDir, clock: systemClock });
          expect((await fresh.list()).map((r) => r.sessionId)).toEqual([id]);
          expect(await readdir(sessions)).toEqual([`${id}.json`]);
        }),
      );
    }, 90_000);
  });
});
