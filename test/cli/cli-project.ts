import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { systemClock } from "../../governance/time/clock.ts";
import type { QueueFile } from "../../governance/stop/directive-queue.ts";
import { SessionRecord } from "../../governance/session/session-record.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { recordTrust } from "../../governance/storage/record-attestation.ts";
import { afterEach, beforeAll } from "vitest";
import { assertCliBuilt } from "./run-cli.ts";

/**
 * A temp OpenCode project, nested two levels below a sandbox folder so a test can prove that nothing was created
 * outside the project (`sandboxEntries()` lists the sandbox without the project).
 */
export type CliProject = {
  sandbox: string;
  dir: string;
  /** Writes a record the way a running plugin does: through the store, under its lock, atomically, attested. */
  put(record: Partial<SessionRecord> & Pick<SessionRecord, "sessionId">): Promise<SessionRecord>;
  /** Pending directive files of a session in queue order (file name order = FIFO), parsed. */
  queued(sessionId: string): Promise<QueueFile[]>;
  /** Every path under the sandbox, relative, excluding the project folder itself. */
  sandboxEntries(): Promise<string[]>;
  cleanup(): Promise<void>;
};

export async function createCliProject(opts: { git?: boolean; bare?: boolean } = {}): Promise<CliProject> {
  const sandbox = await mkdtemp(join(tmpdir(), "ocg-cli-"));
  const dir = join(sandbox, "work", "project");
  await mkdir(dir, { recursive: true });
  // An OpenCode project (the CLI refuses folders that are not one); `init` tests start from a bare folder.
  if (!opts.bare) await writeFile(join(dir, "opencode.json"), "{}\n");
  if (opts.git) execFileSync("git", ["init", "-q"], { cwd: dir });
  const store = new SessionStore({ projectDir: dir, clock: systemClock });
  const now = Date.now();
  return {
    sandbox,
    dir,
    async put(partial) {
      const record = SessionRecord.parse({
        schemaVersion: 2,
        parentId: null,
        rootId: partial.sessionId,
        level: 1,
        depth: 0,
        agent: "build",
        state: "between_turn",
        control: "active",
        createdAt: now,
        updatedAt: now,
        lastActivityAt: now,
        // Attested with this user's key, as the plugin does for a session OpenCode showed it; a test planting a
        // record passes `attest: null`.
        attest: recordTrust().attest(partial.sessionId),
        ...partial,
      });
      const stored = await store.update(record.sessionId, () => record);
      if (!stored) throw new Error(`store did not write ${record.sessionId}`);
      return stored;
    },
    async queued(sessionId) {
      const folder = join(store.paths.queues, sessionId);
      const names = (await readdir(folder).catch(() => [] as string[])).filter((n) => /^\d{15}-.*\.json$/.test(n)).sort();
      return Promise.all(names.map(async (n) => JSON.parse(await readFile(join(folder, n), "utf8")) as QueueFile));
    },
    async sandboxEntries() {
      const out: string[] = [];
      const walk = async (folder: string): Promise<void> => {
        for (const e of await readdir(folder, { withFileTypes: true })) {
          const full = join(folder, e.name);
          if (full === dir) continue;
          out.push(relative(sandbox, full));
          if (e.isDirectory()) await walk(full);
        }
      };
      await walk(sandbox);
      return out.sort();
    },
    cleanup: () => rm(sandbox, { recursive: true, force: true }),
  };
}

/**
 * The projects of one CLI test file: the returned `project()` makes one ({@link createCliProject}), removed after the
 * test that made it; the built CLI the tests run (dist/cli/main.js) is checked once before the file's first test.
 */
export function cliProjects(): (opts?: { git?: boolean; bare?: boolean }) => Promise<CliProject> {
  const made: CliProject[] = [];
  beforeAll(() => assertCliBuilt());
  afterEach(async () => {
    for (const p of made.splice(0)) await p.cleanup();
  });
  return async (opts = {}) => {
    const p = await createCliProject(opts);
    made.push(p);
    return p;
  };
}
