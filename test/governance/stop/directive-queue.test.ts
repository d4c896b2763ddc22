import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClock } from "../../../governance/time/clock.ts";
import { claimAll, enqueue, peekAll, pendingCount, queueDir, type Directive } from "../../../governance/stop/directive-queue.ts";
import { governancePaths, type GovernancePaths } from "../../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../../governance/storage/quarantine.ts";
import { sid, startWorker, tempDirEach, goTogether, expectCleanExits } from "../helpers.ts";

const inject = (id: string, at: number, text = `text ${id}`): Directive => ({ kind: "inject", id, at, text, by: "cli" });

function dirOf(paths: GovernancePaths, id: string): string {
  const dir = queueDir(paths, id);
  if (!dir.ok) throw new Error(dir.reason);
  return dir.path;
}

describe("DirectiveQueue", () => {
  let dir: string;
  let paths: GovernancePaths;
  tempDirEach(
    (d) => {
      dir = d;
      paths = governancePaths(d);
    },
    { worker: true },
  );

  it("delivers every kind of directive once, in FIFO order, and then nothing", async () => {
    const id = sid("queue001");
    const stop: Directive = { kind: "stop", id: "s1", at: 30, level: 2, reason: "user asked", by: "cli" };
    const notify: Directive = { kind: "notify", id: "n1", at: 20, childId: "ses_childxxxxxxxxxxxxxxx", how: "ladder" };
    expect(await pendingCount(paths, id)).toBe(0);
    for (const directive of [inject("i1", 10), stop, notify]) expect((await enqueue(paths, id, directive)).ok).toBe(true);
    expect(await pendingCount(paths, id)).toBe(3);
    expect(await claimAll(paths, id)).toEqual([inject("i1", 10), notify, stop]);
    expect(await claimAll(paths, id)).toEqual([]);
    expect(await pendingCount(paths, id)).toBe(0);
    expect(await readdir(dirOf(paths, id))).toEqual([".claimed"]);
    expect(await readdir(join(dirOf(paths, id), ".claimed"))).toEqual([]);
    expect(await readFile(join(paths.root, ".gitignore"), "utf8")).toContain("*");
  });

  it("keeps call order for directives enqueued in the same millisecond", async () => {
    const id = sid("samems01");
    for (let i = 0; i < 25; i++) await enqueue(paths, id, inject(`d${i}`, 1_000));
    expect((await claimAll(paths, id)).map((d) => d.id)).toEqual(Array.from({ length: 25 }, (_, i) => `d${i}`));
  });

  it("3 injects enqueued from two processes arrive in order in one claimAll; a second claimAll returns none", async () => {
    const id = sid("twoprocs");
    const a = await startWorker("enqueue", { projectDir: dir, sessionId: id, worker: "a", count: 2, startAt: 1_000, step: 2_000 });
    const b = await startWorker("enqueue", { projectDir: dir, sessionId: id, worker: "b", count: 1, startAt: 2_000 });
    await Promise.all([a.ready, b.ready]);
    a.go();
    b.go();
    expect([(await a.exit).code, (await b.exit).code], a.stderr() + b.stderr()).toEqual([0, 0]);
    const delivered = await claimAll(paths, id);
    expect(delivered.map((d) => [d.id, d.at])).toEqual([
      ["a-0", 1_000],
      ["b-0", 2_000],
      ["a-1", 3_000],
    ]);
    expect(delivered.map((d) => (d.kind === "inject" ? d.text : ""))).toEqual(["from a #0", "from b #0", "from a #1"]);
    expect(await claimAll(paths, id)).toEqual([]);
  });

  it("two consumer processes racing two producers never deliver the same directive twice, and lose none", async () => {
    const id = sid("racing01");
    const doneFile = join(dir, "producers-done");
    const producers = await Promise.all(["p0", "p1"].map((worker) => startWorker("enqueue", { projectDir: dir, sessionId: id, worker, count: 100 })));
    const consumers = await Promise.all([0, 1].map(() => startWorker("consume", { projectDir: dir, sessionId: id, doneFile })));
    await goTogether([...consumers, ...producers]);
    await expectCleanExits(producers);
    await writeFile(doneFile, "");
    await expectCleanExits(consumers);
    const [first, second] = consumers.map((c) => JSON.parse(c.stdout()) as string[]);
    const all = [...first!, ...second!];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toHaveLength(200);
    expect(first!.filter((x) => second!.includes(x))).toEqual([]);
    for (const consumer of [first!, second!]) {
      for (const producer of ["p0", "p1"]) {
        const seqs = consumer.filter((x) => x.startsWith(producer)).map((x) => Number(x.split("-")[1]));
        expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      }
    }
    expect(await pendingCount(paths, id)).toBe(0);
  });

  it("delivers a duplicated id once", async () => {
    const id = sid("dupes001");
    await enqueue(paths, id, inject("same", 1, "first copy"));
    await enqueue(paths, id, inject("other", 2));
    await enqueue(paths, id, inject("same", 3, "second copy"));
    expect(await claimAll(paths, id)).toEqual([inject("same", 1, "first copy"), inject("other", 2)]);
    expect(await pendingCount(paths, id)).toBe(0);
  });

  it("quarantines malformed queue files with a reason: not delivered, not lost, reported once", async () => {
    const id = sid("malform1");
    const clock = createFakeClock(77_000);
    await enqueue(paths, id, inject("good", 5));
    const queue = dirOf(paths, id);
    const garbage = "{not json";
    const wrongShape = JSON.stringify({ schemaVersion: 1, sessionId: id, directive: { kind: "explode", id: "x", at: 1 } });
    const otherSession = JSON.stringify({ schemaVersion: 1, sessionId: sid("someone1"), directive: inject("y", 1) });
    await writeFile(join(queue, "000000000000001-00000000-1-00000000.json"), garbage);
    await writeFile(join(queue, "000000000000002-00000000-1-00000000.json"), wrongShape);
    await writeFile(join(queue, "000000000000003-00000000-1-00000000.json"), otherSession);
    const problems: StoreProblem[] = [];
    expect(await claimAll(paths, id, { clock, onProblem: (p) => problems.push(p) })).toEqual([inject("good", 5)]);
    expect(problems.map((p) => p.kind)).toEqual(["quarantined", "quarantined", "quarantined"]);
    const moved = problems.map((p) => (p.kind === "quarantined" ? p.movedTo : ""));
    expect(await Promise.all(moved.map((m) => readFile(m, "utf8")))).toEqual([garbage, wrongShape, otherSession]);
    for (const m of moved) {
      expect(JSON.parse(await readFile(`${m}.reason.json`, "utf8"))).toMatchObject({ quarantinedAt: 77_000 });
    }
    expect(await claimAll(paths, id, { onProblem: (p) => problems.push(p) })).toEqual([]);
    expect(problems).toHaveLength(3);
  });

  it("re-queues a claim whose consumer died before finishing, but not a live consumer's claim", async () => {
    const id = sid("orphan01");
    await enqueue(paths, id, inject("kept", 1));
    const queue = dirOf(paths, id);
    const [name] = await readdir(queue);
    const deadPid = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
    await mkdir(join(queue, ".claimed"), { recursive: true });
    const { rename } = await import("node:fs/promises");
    await rename(join(queue, name!), join(queue, ".claimed", `${name}~${deadPid}~abcd`));
    await enqueue(paths, id, inject("live", 2));
    const [liveName] = (await readdir(queue)).filter((n) => n.endsWith(".json"));
    await rename(join(queue, liveName!), join(queue, ".claimed", `${liveName}~${process.pid}~beef`));
    expect(await pendingCount(paths, id)).toBe(0);
    expect(await claimAll(paths, id)).toEqual([inject("kept", 1)]);
    expect(await readdir(join(queue, ".claimed"))).toEqual([`${liveName}~${process.pid}~beef`]);
  });

  it("rejects invalid directives without writing anything", async () => {
    const id = sid("invalid1");
    const bad = [
      { kind: "stop", id: "s", at: 1, level: 4, reason: "r", by: "x" },
      { kind: "inject", id: "../escape", at: 1, text: "t", by: "x" },
      { kind: "inject", id: "ok", at: 1.5, text: "t", by: "x" },
      { kind: "notify", id: "ok", at: 1 },
      { kind: "launch", id: "ok", at: 1 },
    ];
    for (const directive of bad) {
      const result = await enqueue(paths, id, directive as Directive);
      expect(result.ok).toBe(false);
    }
    expect(existsSync(dirOf(paths, id))).toBe(false);
  });

  it("ignores temp files and foreign names when counting and claiming", async () => {
    const id = sid("tempfile");
    await enqueue(paths, id, inject("real", 1));
    const queue = dirOf(paths, id);
    await writeFile(join(queue, `.000000000000001-00000000-1-00000000.json.${process.pid}.0123456789ab.tmp`), "{");
    await writeFile(join(queue, "README.txt"), "hi");
    expect(await pendingCount(paths, id)).toBe(1);
    expect(await claimAll(paths, id)).toEqual([inject("real", 1)]);
  });

  it("peekAll shows pending directives without claiming them", async () => {
    const id = sid("peeking1");
    const stop: Directive = { kind: "stop", id: "s1", at: 2, level: 1, reason: "r", by: "cli" };
    await enqueue(paths, id, inject("i1", 1));
    await enqueue(paths, id, stop);
    await enqueue(paths, id, inject("i1", 3));
    await writeFile(join(dirOf(paths, id), "000000000000004-00000000-1-00000000.json"), "junk");
    expect(await peekAll(paths, id)).toEqual([inject("i1", 1), stop]);
    expect(await pendingCount(paths, id)).toBe(4);
    expect(await claimAll(paths, id)).toEqual([inject("i1", 1), stop]);
    expect(await peekAll(paths, id)).toEqual([]);
  });

  it("claims only the requested kinds and leaves the rest queued in order", async () => {
    const id = sid("kinds001");
    const notify: Directive = { kind: "notify", id: "n1", at: 2, childId: "ses_childxxxxxxxxxxxxxxx", how: "compliance" };
    await enqueue(paths, id, inject("i1", 1));
    await enqueue(paths, id, notify);
    await enqueue(paths, id, inject("i2", 3));
    await writeFile(join(dirOf(paths, id), "000000000000004-00000000-1-00000000.json"), "junk");
    const problems: StoreProblem[] = [];
    expect(await claimAll(paths, id, { kinds: ["notify"], onProblem: (p) => problems.push(p) })).toEqual([notify]);
    expect(problems).toHaveLength(1);
    expect(await pendingCount(paths, id)).toBe(2);
    expect(await claimAll(paths, id, { kinds: ["notify"] })).toEqual([]);
    expect(await claimAll(paths, id)).toEqual([inject("i1", 1), inject("i2", 3)]);
  });

  it("claims only the requested ids (notes a turn showed) and leaves the others queued", async () => {
    const id = sid("ids00001");
    const note = (n: string, at: number): Directive => ({ kind: "notify", id: n, at, childId: "ses_childxxxxxxxxxxxxxxx", how: "hard-stop" });
    await enqueue(paths, id, note("n1", 1));
    await enqueue(paths, id, note("n2", 2));
    expect(await claimAll(paths, id, { ids: new Set(["n1"]) })).toEqual([note("n1", 1)]);
    expect(await peekAll(paths, id)).toEqual([note("n2", 2)]);
  });
});
