import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { withFileLock } from "../../../governance/storage/file-lock.ts";
import { ensureGovernanceDir, governancePaths, sessionFilePath } from "../../../governance/storage/governance-paths.ts";
import { makeTempDir, disposeWorker, prepareWorker, sid, startWorker } from "../helpers.ts";

describe("withFileLock", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(() => prepareWorker());
  afterAll(() => disposeWorker());
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

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
    const paths = governancePaths(dir);
    const id = sid("heldlock");
    const holder = await startWorker("hold-lock", { projectDir: dir, sessionId: id });
    try {
      await holder.ready;
      const file = sessionFilePath(paths, id);
      if (!file.ok) throw new Error(file.reason);
      await expect(withFileLock(file.path, async () => 1, { staleMs: 2_000, maxWaitMs: 300 })).rejects.toMatchObject({
        code: "ELOCKED",
      });
    } finally {
      holder.child.kill("SIGKILL");
      await holder.exit;
    }
  });

  it("recovers a lock whose holder was killed (-9) once it goes stale", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    const id = sid("deadholder");
    const file = sessionFilePath(paths, id);
    if (!file.ok) throw new Error(file.reason);
    const holder = await startWorker("hold-lock", { projectDir: dir, sessionId: id });
    await holder.ready;
    holder.child.kill("SIGKILL");
    await holder.exit;
    expect(existsSync(`${file.path}.lock`)).toBe(true);
    const started = Date.now();
    const result = await withFileLock(file.path, async () => "recovered", { staleMs: 2_000 });
    const waited = Date.now() - started;
    expect(result).toBe("recovered");
    expect(waited).toBeLessThan(6_000);
    expect(existsSync(`${file.path}.lock`)).toBe(false);
  });
});
