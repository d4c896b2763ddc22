import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../governance/config/config.ts";
import { makeRecord } from "../governance/fixtures/records.ts";
import { makeTempDir } from "../governance/helpers.ts";
import { claimAll, enqueue, peekAll, pendingCount } from "../../governance/stop/directive-queue.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { ensureGovernanceDir, governancePaths } from "../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { createFakeClock } from "../../governance/time/clock.ts";
import { assertCliBuilt, runCli } from "../cli/run-cli.ts";

/**
 * Issue 8 §1: a repository can ship any path of `.opencode/governance/` (or `.opencode/` itself, or the config) as a
 * symlink, a FIFO or a folder. For every such path × kind, every store, audit, queue, quarantine, archive and
 * config operation and every CLI command runs against the planted project, and the "victim" folder outside the
 * project must stay byte-for-byte unchanged (no file created where a dangling link points, either).
 */

const RUN = "ses_running000000000000000001";
const STALE = "ses_stale00000000000000000001";
const BAD = "ses_corrupt0000000000000000001";
const QUEUED = "000001700000000-00000001-1-00000000.json";

type Kind = "link-to-file" | "link-to-dir" | "dangling" | "fifo" | "dir";

/** Paths relative to `.opencode/`, and whether governance expects a file there (a FIFO/folder is then hostile too). */
const ROWS: { path: string; file: boolean }[] = [
  { path: "governance/audit.log", file: true },
  { path: "governance/sessions", file: false },
  { path: `governance/sessions/${RUN}.json`, file: true },
  { path: "governance/queues", file: false },
  { path: `governance/queues/${RUN}`, file: false },
  { path: `governance/queues/${RUN}/${QUEUED}`, file: true },
  { path: "governance/quarantine", file: false },
  { path: "governance/archive", file: false },
  { path: "governance/.gitignore", file: true },
  { path: "governance", file: false },
  { path: "governance.yaml", file: true },
  { path: ".", file: false },
];

const KINDS = (file: boolean): Kind[] => (file ? ["link-to-file", "link-to-dir", "dangling", "fifo", "dir"] : ["link-to-file", "link-to-dir", "dangling"]);

/** Every file under `dir` with its bytes' hash, plus every folder: what "unchanged" means for the victim. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const st = lstatSync(full);
      const key = `${rel}${name}`;
      if (st.isDirectory()) {
        out[`${key}/`] = `dir ${(st.mode & 0o777).toString(8)}`;
        walk(full, `${key}/`);
      } else out[key] = `${st.size} ${createHash("sha256").update(readFileSync(full)).digest("hex")} ${(st.mode & 0o777).toString(8)}`;
    }
  };
  walk(dir, "");
  return out;
}

interface Planted {
  project: string;
  victim: string;
  planted: string;
}

/** A governed project with a running and a stale record, a corrupt record, a queued directive and an audit line. */
async function plantedProject(root: string, row: string, kind: Kind): Promise<Planted> {
  const project = join(root, "project");
  const victim = join(root, "victim");
  mkdirSync(join(victim, "dir"), { recursive: true });
  writeFileSync(join(victim, "file.txt"), "the user's shell start-up file\n");
  writeFileSync(join(victim, "dir", "inner.txt"), "inner\n");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "opencode.json"), "{}\n");
  const paths = governancePaths(project);
  await ensureGovernanceDir(paths);
  const clock = createFakeClock(Date.now());
  const store = new SessionStore({ projectDir: project, clock });
  await store.update(RUN, () => makeRecord({ sessionId: RUN, createdAt: clock.now(), updatedAt: clock.now(), lastActivityAt: clock.now() }));
  await store.update(STALE, () => makeRecord({ sessionId: STALE, createdAt: 1, updatedAt: 1, lastActivityAt: 1 }));
  writeFileSync(join(paths.sessions, `${BAD}.json`), "{ torn");
  mkdirSync(join(paths.queues, RUN), { recursive: true });
  writeFileSync(
    join(paths.queues, RUN, QUEUED),
    JSON.stringify({ schemaVersion: 1, sessionId: RUN, directive: { kind: "inject", id: "i1", at: 1, text: "hi", by: "t" } }),
  );
  await new AuditLog({ paths, clock }).append("plugin_started");
  writeFileSync(paths.configFile, "phase: planning\n");

  const planted = row === "." ? join(project, ".opencode") : join(project, ".opencode", row);
  rmSync(planted, { recursive: true, force: true });
  const target = { "link-to-file": join(victim, "file.txt"), "link-to-dir": join(victim, "dir"), dangling: join(victim, "created-by-governance") }[
    kind as "link-to-file"
  ];
  if (kind === "fifo") execFileSync("mkfifo", [planted]);
  else if (kind === "dir") mkdirSync(planted);
  else symlinkSync(target, planted);
  return { project, victim, planted };
}

/** Every in-process operation; each may refuse (throw or report), none may write outside or hang. */
async function runOperations(project: string): Promise<{ errors: string[]; problems: StoreProblem[] }> {
  const problems: StoreProblem[] = [];
  const errors: string[] = [];
  const clock = createFakeClock(Date.now());
  const store = new SessionStore({ projectDir: project, clock, onProblem: (p) => problems.push(p), lock: { maxWaitMs: 1_000 } });
  const paths = store.paths;
  const audit = new AuditLog({ paths, clock, maxBytes: 4096, onProblem: (p) => problems.push(p) });
  const attempt = async (what: string, op: () => Promise<unknown>) => {
    try {
      await op();
    } catch (error) {
      errors.push(`${what}: ${(error as Error).message}`);
    }
  };
  await attempt("ensureGovernanceDir", () => ensureGovernanceDir(paths));
  await attempt("update", () => store.update(RUN, (r) => r && { ...r, counters: { ...r.counters, toolCalls: r.counters.toolCalls + 1 } }));
  await attempt("update new", () => store.update("ses_brandnew00000000000000001", () => makeRecord({ sessionId: "ses_brandnew00000000000000001" })));
  await attempt("read", () => store.read(RUN));
  await attempt("list", () => store.list());
  await attempt("archiveStale", () => store.archiveStale(60_000));
  for (let i = 0; i < 40; i++) await attempt("audit append", () => audit.append("session_created", { sessionId: RUN, reason: "x".repeat(100) }));
  await attempt("audit read", () => audit.read({ includeRotated: true }));
  await attempt("enqueue", () => enqueue(paths, RUN, { kind: "stop", id: "s1", at: clock.now(), level: 1, reason: "r", by: "t" }));
  await attempt("peekAll", () => peekAll(paths, RUN));
  await attempt("pendingCount", () => pendingCount(paths, RUN));
  await attempt("claimAll", () => claimAll(paths, RUN, { clock, onProblem: (p) => problems.push(p) }));
  await attempt("loadConfig", async () => {
    const loaded = await loadConfig(paths.configFile);
    if (loaded.problems.length > 0) throw new Error(loaded.problems.map((p) => p.message).join("; "));
  });
  return { errors, problems };
}

describe("symlink table (issue 8 §1): nothing governance does leaves the project's real governance folder", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    assertCliBuilt();
    ({ dir: root, cleanup } = await makeTempDir("gov-symlink-"));
  });
  afterAll(() => cleanup());

  const cases = ROWS.flatMap((row) => KINDS(row.file).map((kind) => ({ ...row, kind })));
  let n = 0;
  it.each(cases)("$path as $kind: victim unchanged, refusal reported with the path", async ({ path, kind }) => {
    const caseRoot = join(root, String(n++));
    const { project, victim, planted } = await plantedProject(caseRoot, path, kind);
    const before = snapshot(victim);

    const { errors, problems } = await runOperations(project);
    // The CLI commands run for the two kinds an attacker would ship (a link to a victim file, a dangling link that
    // would create one); the in-process operations above cover every kind. Five processes per case is the cost.
    const cli =
      kind === "link-to-file" || kind === "dangling"
        ? await Promise.all(
            [["sessions", "--all"], ["status"], ["stop", RUN, "--reason", "$(touch /tmp/pwned)"], ["inject", RUN, "check the tests"], ["doctor"]].map((args) =>
              runCli([...args, "--dir", project], { cwd: project }),
            ),
          )
        : [];

    expect(snapshot(victim)).toEqual(before);
    expect(existsSync(join(victim, "created-by-governance"))).toBe(false);
    // The refusal is visible and names the planted path (or, for a link inside a refused folder, that folder).
    const said = [...errors, ...problems.map((p) => `${p.file} ${p.reason}`), ...cli.map((r) => r.stdout + r.stderr)].join("\n");
    expect(said).toContain(planted);
    // The CLI never crashes with a stack trace; doctor fails on a hostile state folder or config.
    for (const r of cli) expect(r.stderr).not.toMatch(/\n\s+at /);
    const stateOrConfig = !path.startsWith("governance/sessions/") && !path.startsWith(`governance/queues/${RUN}/`);
    if (cli.length > 0 && stateOrConfig) expect(cli[4]!.code, cli[4]!.stdout).toBe(1);
  });
});
