import { randomBytes } from "node:crypto";
import { appendFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpendLedger, signRaise } from "../../../governance/storage/spend-ledger.ts";
import { disposeWorker, makeTempDir, prepareWorker, startWorker, goTogether, expectCleanExits } from "../helpers.ts";

/**
 * The spend ledger (issue 44, docs/decisions/0065-spend-ledger.md): one append-only file per writer and day, summed by
 * every reader. Several processes append at once and the total is exact; a restart keeps what was spent; a raise
 * counts only when signed with the user's key.
 */

const DAY = "2026-11-28";
const key = randomBytes(32);
const temps: Array<() => Promise<void>> = [];
async function ledgerDir(): Promise<string> {
  const t = await makeTempDir("spend-");
  temps.push(t.cleanup);
  return join(t.dir, "spend");
}

beforeAll(() => prepareWorker(), 60_000);
afterAll(async () => {
  await disposeWorker();
  for (const c of temps) await c();
});

describe("several OpenCode processes append at once", () => {
  it("the total is exact whatever the writers and their lines (property, real processes)", async () => {
    const lines = fc.array(
      fc.record({ modelRequests: fc.constant(1), outputTokens: fc.integer({ min: 0, max: 50_000 }), cost: fc.integer({ min: 0, max: 10_000 }) }),
      {
        minLength: 1,
        maxLength: 150,
      },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(lines, { minLength: 2, maxLength: 4 }), async (writers) => {
        const dir = await ledgerDir();
        const reader = new SpendLedger(dir, null);
        const workers = await Promise.all(
          writers.map((amounts, i) => startWorker("spend-append", { projectDir: dir, ledgerDir: dir, day: DAY, amounts, sessionId: `ses_w${i}` })),
        );
        await goTogether(workers);
        // A reader summing while they write sees whole lines only, and never more than was written.
        const expected = { modelRequests: 0, outputTokens: 0, cost: 0 };
        for (const a of writers.flat()) for (const k of Object.keys(expected) as Array<keyof typeof expected>) expected[k] += a[k];
        const during = reader.sum([DAY]);
        expect(during.refused).toBe(0);
        expect(during.use.modelRequests ?? 0).toBeLessThanOrEqual(expected.modelRequests);
        await expectCleanExits(workers);
        const after = reader.sum([DAY]);
        expect(after.refused).toBe(0);
        expect(after.use.modelRequests).toBe(expected.modelRequests);
        expect(after.use.outputTokens ?? 0).toBe(expected.outputTokens);
        expect(after.use.cost ?? 0).toBe(expected.cost);
        // A process that starts later (a restart) reads the same total from the files.
        expect(new SpendLedger(dir, null).sum([DAY]).use).toEqual(after.use);
      }),
      { numRuns: 4 },
    );
  }, 120_000);
});

describe("reading and raising", () => {
  it("reads a line only once it is whole; a cut line (a killed writer) is never counted", async () => {
    const dir = await ledgerDir();
    const w = new SpendLedger(dir, null);
    w.add(DAY, 1, { cost: 2 });
    const file = join(dir, readdirSync(dir)[0] as string);
    appendFileSync(file, '{"at":2,"use":{"cost":');
    const r = new SpendLedger(dir, null);
    expect(r.sum([DAY]).use).toEqual({ cost: 2 });
    appendFileSync(file, "3}}\n");
    expect(r.sum([DAY]).use).toEqual({ cost: 5 });
    expect(r.sum(["2026-11-27"]).use).toEqual({});
  });

  it("a line that is not the ledger's is refused and counted as refused, never as spend", async () => {
    const dir = await ledgerDir();
    new SpendLedger(dir, null).add(DAY, 1, { cost: 1 });
    writeFileSync(join(dir, `${DAY}.intruder.jsonl`), '{"at":1,"use":{"cost":-5}}\nnot json\n');
    const sum = new SpendLedger(dir, null).sum([DAY]);
    expect(sum.use).toEqual({ cost: 1 });
    expect(sum.refused).toBe(2);
  });

  it("a raise counts when signed with the user's key, for its day only, once whatever the copies", async () => {
    const dir = await ledgerDir();
    const cli = new SpendLedger(dir, key, "cli");
    const raise = { id: "raise-0001-abcd", period: "daily" as const, add: { cost: 5 }, by: "cli" };
    cli.raise(DAY, 1, raise);
    const copy = JSON.stringify({ at: 2, raise, sig: signRaise(key, DAY, raise) });
    writeFileSync(join(dir, `${DAY}.copy.jsonl`), `${copy}\n`);
    const forged = { ...raise, id: "raise-0002-abcd", add: { cost: 500 } };
    writeFileSync(join(dir, `${DAY}.forged.jsonl`), `${JSON.stringify({ at: 3, raise: forged, sig: signRaise(randomBytes(32), DAY, forged) })}\n`);
    // Moved to another day, the signature no longer holds.
    writeFileSync(join(dir, "2026-11-29.moved.jsonl"), `${copy}\n`);
    const reader = new SpendLedger(dir, key);
    expect(reader.sum([DAY]).raises.map((r) => [r.id, r.add.cost, r.day])).toEqual([["raise-0001-abcd", 5, DAY]]);
    expect(reader.sum(["2026-11-29"]).raises).toEqual([]);
    expect(new SpendLedger(dir, null).sum([DAY]).raises).toEqual([]);
  });

  it("keeps 15 days: older files go when a writer prunes, files of another shape stay", async () => {
    const dir = await ledgerDir();
    const w = new SpendLedger(dir, null);
    w.add("2026-11-01", 1, { cost: 1 });
    w.add("2026-11-14", 1, { cost: 1 });
    writeFileSync(join(dir, "notes.txt"), "mine");
    w.prune(DAY);
    expect(readdirSync(dir).sort()).toEqual([`2026-11-14.${w.writer}.jsonl`, "notes.txt"]);
  });
});
