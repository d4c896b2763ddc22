import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { SessionStore } from "../../governance/session/session-store.ts";
import { AuditLog } from "../../governance/storage/audit-log.ts";
import { governancePaths } from "../../governance/storage/governance-paths.ts";
import { recordTrust } from "../../governance/storage/record-attestation.ts";
import type { ControlContext } from "../../governance/stop/control-requests.ts";
import { createFakeClock } from "../../governance/time/clock.ts";
import { makeRecord as baseRecord } from "./fixtures/records.ts";

const WORKER = fileURLToPath(new URL("./fixtures/worker.ts", import.meta.url));

let bundled: Promise<string[]> | undefined;

/**
 * How to start the worker. `node --import tsx` costs ~1 s of CPU per process, too much for 50 kill trials, so the
 * worker is bundled once per test file with esbuild (tsx's own transpiler) into a plain CommonJS file (~0.2 s to
 * start). The bundle is the same source; if esbuild is unavailable the tsx loader is used instead.
 */
function workerArgv(): Promise<string[]> {
  bundled ??= (async () => {
    try {
      const { build } = await import("esbuild");
      const outdir = await mkdtemp(join(tmpdir(), "gov-worker-"));
      const outfile = join(outdir, "worker.cjs");
      await build({ entryPoints: [WORKER], bundle: true, platform: "node", format: "cjs", outfile, logLevel: "warning" });
      return [outfile];
    } catch {
      return ["--import", "tsx", WORKER];
    }
  })();
  return bundled;
}

/** Builds the worker ahead of time so the first test does not pay for it. */
export async function prepareWorker(): Promise<void> {
  await workerArgv();
}

/** Removes the bundle (call from `afterAll` in files that call {@link prepareWorker}). */
export async function disposeWorker(): Promise<void> {
  const argv = await bundled;
  bundled = undefined;
  if (argv?.length === 1) await rm(dirname(argv[0]!), { recursive: true, force: true });
}

export async function makeTempDir(prefix = "gov-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A fresh temp dir for each test of the calling `describe`, handed to `use` before the test and removed after it; with
 * `worker`, the worker bundle is built before the first test and removed after the last.
 */
export function tempDirEach(use: (dir: string) => void, options: { worker?: boolean } = {}): void {
  let cleanup: (() => Promise<void>) | undefined;
  if (options.worker) {
    beforeAll(() => prepareWorker());
    afterAll(() => disposeWorker());
  }
  beforeEach(async () => {
    const made = await makeTempDir();
    cleanup = made.cleanup;
    use(made.dir);
  });
  afterEach(() => cleanup?.());
}

/** A valid session id derived from a short label (letters and digits only). */
export function sid(label: string): string {
  return `ses_${label.replace(/[^A-Za-z0-9]/g, "").padEnd(8, "0")}`;
}

/** A root record created and last active at `at` (the store tests' shape of {@link baseRecord}). */
export function makeRecord(sessionId: string, at: number, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return baseRecord({ sessionId, agent: "build", state: "beginning", createdAt: at, updatedAt: at, lastActivityAt: at, ...overrides });
}

export interface Worker {
  child: ChildProcess;
  ready: Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout: () => string;
  stderr: () => string;
  go: () => void;
}

/** Sets the workers off at once, when every one of them is ready, so that they race. */
export async function goTogether(workers: readonly Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.go();
}

/** Waits for the workers to end and expects each to exit 0 (their stderr is the message when one does not). */
export async function expectCleanExits(workers: readonly Worker[]): Promise<void> {
  const exits = await Promise.all(workers.map((w) => w.exit));
  expect(
    exits.map((e) => e.code),
    workers.map((w) => w.stderr()).join("\n"),
  ).toEqual(workers.map(() => 0));
}

/** Spawns the worker (`fixtures/worker.ts <mode> <args>`); `ready` resolves once the worker prints "ready". */
export async function startWorker(mode: string, args: Record<string, unknown>): Promise<Worker> {
  const child = spawn(process.execPath, [...(await workerArgv()), mode, JSON.stringify(args)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let markReady: () => void = () => undefined;
  let failReady: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  void ready.catch(() => undefined);
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    if (out.includes("ready\n")) markReady();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      failReady(new Error(`worker ${mode} exited (${code ?? signal}) before ready: ${err}`));
      resolve({ code, signal });
    });
  });
  return {
    child,
    ready,
    exit,
    stdout: () => out.replace("ready\n", ""),
    stderr: () => err,
    go: () => child.stdin!.write("go\n"),
  };
}

/** Every path under `dir`, relative, sorted (directories included). */
export async function walk(dir: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      found.push(relative(dir, full));
      if (entry.isDirectory()) await visit(full);
    }
  };
  await visit(dir);
  return found.sort();
}

/** Ids that must never become a path: traversal, absolute paths, NUL, lookalikes, wrong types. */
export const HOSTILE_IDS: unknown[] = [
  "../x",
  "..",
  ".",
  "",
  "ses_/../../etc",
  "ses_../../etc/passwd",
  "ses_abcdefgh/../../x",
  "ses_abcdefgh\\..\\..\\x",
  "/etc/passwd",
  "/tmp/ses_abcdefgh",
  "C:\\Windows\\ses_abcdefgh",
  "ses_abcd\u0000efgh",
  `ses_${"a".repeat(65)}`,
  `ses_${"a".repeat(5000)}`,
  "ses_\u0430bcdefgh", // Cyrillic а
  "ses_ＡＢＣＤＥＦＧＨ", // full-width
  "ses_abcdefgh\u202e", // bidi override
  "ses_abcdefgh.json",
  " ses_abcdefgh",
  "ses_abcdefgh\n",
  "ses_abc%2e%2e",
  "SES_abcdefgh",
  "ses_abc",
  "ses_abcdefgh/",
  123,
  null,
  undefined,
  { toString: () => "ses_abcdefgh" },
];

/** A temp project for the control requests (what the CLI's stop and inject do), with its own user key. */
export type ControlProject = {
  root: string;
  store: SessionStore;
  /** The requests' context, as the CLI builds it (`by: "cli"`). */
  ctx: ControlContext;
  /** A record as the plugin writes it: attested with this user's key ({@link makeRecord}'s arguments). */
  attested: (id: string, at: number, overrides?: Partial<SessionRecord>) => SessionRecord;
  remove: () => void;
};

/** Makes a {@link ControlProject} under a fresh temp folder; XDG_STATE_HOME points into it, so the key is its own. */
export function controlProject(prefix: string, clockAt: number): ControlProject {
  const root = mkdtempSync(join(tmpdir(), prefix));
  process.env.XDG_STATE_HOME = join(root, "state");
  const project = join(root, "project");
  mkdirSync(project);
  const clock = createFakeClock(clockAt);
  const store = new SessionStore({ projectDir: project, clock });
  const trust = recordTrust();
  const paths = governancePaths(project);
  return {
    root,
    store,
    ctx: { paths, store, audit: new AuditLog({ paths, clock }), clock, by: "cli", trust },
    attested: (id, at, overrides = {}) => makeRecord(id, at, { ...overrides, attest: trust.attest(id) ?? null }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
