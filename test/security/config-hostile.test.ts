import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, loadConfig, MAX_CONFIG_BYTES } from "../../governance/config/config.ts";
import { makeTempDir } from "../governance/helpers.ts";
import { assertCliBuilt, runCli } from "../cli/run-cli.ts";

/**
 * Issue 8 §1 and §5 for `.opencode/governance.yaml`: a FIFO, a symlink to `/dev/zero` or a 13 MB file neither hangs
 * nor exhausts memory (refused unread, defaults in force, reported); typos of keys are reported with a did-you-mean
 * by `status` and by `doctor` as a failure.
 */
describe("hostile governance.yaml", () => {
  let dir: string;
  let file: string;
  let cleanup: () => Promise<void>;
  beforeAll(() => assertCliBuilt());
  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir("gov-config-hostile-"));
    mkdirSync(join(dir, ".opencode"));
    writeFileSync(join(dir, "opencode.json"), "{}\n");
    file = join(dir, ".opencode", "governance.yaml");
  });
  afterEach(() => cleanup());

  const plant: Record<string, (file: string) => void> = {
    "a FIFO": (f) => execFileSync("mkfifo", [f]),
    "a symlink to /dev/zero": (f) => symlinkSync("/dev/zero", f),
    "a 13 MB file": (f) => {
      writeFileSync(f, "phase: x\n");
      truncateSync(f, 13 * 1024 * 1024);
    },
    "a folder": (f) => mkdirSync(f),
  };

  it.each(Object.keys(plant))("%s: refused at once, defaults in force, reported by loadConfig, status and doctor", async (kind) => {
    plant[kind]!(file);
    const started = performance.now();
    const loaded = await loadConfig(file);
    const ms = performance.now() - started;
    console.log(`[config-hostile] ${kind}: refused in ${ms.toFixed(1)} ms: ${loaded.problems[0]?.message}`);
    expect(loaded.config).toEqual(DEFAULT_CONFIG);
    expect(loaded.source).toBe("defaults");
    expect(loaded.problems[0]?.message).toContain(file);
    const status = await runCli(["status", "--dir", dir], { cwd: dir, timeoutMs: 20_000 });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("1 problem(s)");
    const doctor = await runCli(["doctor", "--dir", dir], { cwd: dir, timeoutMs: 20_000 });
    expect(doctor.code).toBe(1);
  });

  it("a file just under the size bound is still read", async () => {
    writeFileSync(file, `phase: big\n${"# comment\n".repeat(Math.floor((MAX_CONFIG_BYTES - 20) / 10))}`);
    expect((await loadConfig(file)).config.phase).toBe("big");
  });

  it("typos (maxDepht, enforcment) are failures in doctor and problems in status, with a did-you-mean", async () => {
    writeFileSync(file, "enforcment: log-only\ndelegation:\n  maxDepht: 1\n");
    const status = await runCli(["status", "--dir", dir], { cwd: dir });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("2 problem(s)");
    expect(status.stdout).toMatch(/line 1, column 1: unknown key "enforcment" .*did you mean "enforcement"\?/);
    expect(status.stdout).toMatch(/line 3, column 3: unknown key "maxDepht" in delegation .*did you mean "maxDepth"\?/);
    const doctor = await runCli(["doctor", "--dir", dir], { cwd: dir });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/✗ config line 3, column 3: unknown key "maxDepht".*did you mean "maxDepth"/);
    expect(doctor.stdout).not.toMatch(/config .* is valid/);
  });
});
