/**
 * `npx tsx scripts/count-syscalls.ts [--scenario A|B] [--calls N] [--variants empty,governance] [--baseline file]`: the file system work
 * of one run of a bench scenario in the real host, counted with `strace -f` attached to `opencode serve` for the
 * prompt's turn (docs/performance.md, issue 31). Counts do not depend on the machine's load, unlike times.
 *
 * Printed per variant: every traced system call's count, and the path-bearing ones (open, stat, rename, mkdir,
 * unlink …) split by where the path is: governance's state folder, the user's governance key / config, the project,
 * elsewhere. Divide by the scenario's model requests for a per-step figure. Needs `strace` and ptrace rights.
 */
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { serveOpencode, startScriptedModel } from "../test/harness/index.ts";
import { ensureOpencodeBinary, ensureWarmDeps } from "../test/harness/warm-cache.ts";
import {
  benchProject,
  benchRespond,
  primeTranspilerCache,
  scenarioPrompt,
  setBaselineBundle,
  transpilerCacheEnv,
  type Scenario,
  type Variant,
} from "./bench/host.ts";
import { findProcessByCwd } from "./bench/proc.ts";
import { option } from "./bench/cli-args.ts";

const SCENARIO = (option("--scenario") ?? "A") as Scenario;
const CALLS = Number(option("--calls") ?? (SCENARIO === "A" ? "100" : "20"));
const VARIANTS = (option("--variants") ?? "empty,governance").split(",") as Variant[];
/** `--baseline <dist/plugin/index.js of another build>` with `--variants …,baseline,…`: that build counted beside this one. */
const baseline = option("--baseline");
if (baseline) setBaselineBundle(baseline);

/** System calls traced: the file ones (with a path) and the descriptor ones that move file data. */
const TRACE = "trace=%file,read,write,pread64,pwrite64,fsync,fdatasync,close";

type Counts = { calls: Map<string, number>; byPlace: Map<string, number>; requests: number };

async function countRun(model: Awaited<ReturnType<typeof startScriptedModel>>, variant: Variant): Promise<Counts> {
  const project = benchProject(model, variant);
  const out = path.join(os.tmpdir(), `ocg-strace-${process.pid}-${variant}.txt`);
  try {
    const serve = await serveOpencode(project, { env: transpilerCacheEnv(variant, project) });
    try {
      const session = await serve.http.createSession();
      const pid = findProcessByCwd(project.dir);
      if (pid === undefined) throw new Error("opencode pid not found");
      const tracer = spawn("strace", ["-f", "-qq", "-y", "-e", TRACE, "-o", out, "-p", String(pid)], { stdio: "ignore" });
      await new Promise((r) => setTimeout(r, 1500));
      const from = model.requests.length;
      await serve.http.prompt(session.id, scenarioPrompt(SCENARIO, CALLS));
      const requests = model.requests.slice(from).filter((r) => r.kind === "agent").length;
      tracer.kill("SIGINT");
      await new Promise((r) => tracer.on("close", r));
      return { ...classify(readFileSync(out, "utf8"), project.dir, project.governanceDir), requests };
    } finally {
      await serve.stop();
    }
  } finally {
    project.cleanup();
    rmSync(out, { force: true });
  }
}

function classify(trace: string, projectDir: string, governanceDir: string): Omit<Counts, "requests"> {
  const calls = new Map<string, number>();
  const byPlace = new Map<string, number>();
  const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const line of trace.split("\n")) {
    const m = /^\d+\s+(?:<\.\.\. )?(\w+)[( ]/.exec(line);
    if (!m || line.includes("resumed>")) continue;
    const call = m[1]!;
    add(calls, call);
    // With -y a descriptor shows its path (`3</path>`); a path argument is quoted.
    const p =
      call === "read" || call === "write" || call === "close" || call.startsWith("p") || call.startsWith("f")
        ? /\(\d+<([^>]*)>/.exec(line)?.[1]
        : /"([^"]*)"/.exec(line)?.[1];
    if (p === undefined) continue;
    const place =
      p.startsWith("socket:") || p.startsWith("pipe:") || p.startsWith("anon_inode:")
        ? "sockets, pipes, events"
        : p.startsWith(governanceDir)
          ? "governance state folder"
          : p.includes("opencode-governance")
            ? "governance user files (key, config)"
            : p.startsWith(projectDir)
              ? "project (incl. .opencode)"
              : "elsewhere";
    add(byPlace, `${call} ${place}`);
    // The two figures that say what governance does with its records: reads (open read-only) and writes (the rename of
    // a finished temporary file onto the record).
    if (call === "openat" && /\/sessions\/ses_[^/"]*\.json"/.test(line) && line.includes("O_RDONLY")) add(byPlace, "= record file reads (open read-only)");
    if (call === "rename" && /, "[^"]*\/sessions\/ses_[^/"]*\.json"/.test(line)) add(byPlace, "= record file writes (rename onto the record)");
  }
  return { calls, byPlace };
}

async function main(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  primeTranspilerCache();
  const model = await startScriptedModel(benchRespond);
  const results = new Map<Variant, Counts>();
  try {
    for (const v of VARIANTS) results.set(v, await countRun(model, v));
  } finally {
    await model.close();
  }
  console.log(`scenario ${SCENARIO} (${CALLS} calls): system calls of the opencode process during the turn`);
  const keys = (f: (c: Counts) => Map<string, number>) => [...new Set([...results.values()].flatMap((c) => [...f(c).keys()]))].sort();
  console.log(`  ${"".padEnd(52)} ${VARIANTS.map((v) => v.padStart(11)).join(" ")}`);
  console.log(`  ${"model requests".padEnd(52)} ${VARIANTS.map((v) => String(results.get(v)!.requests).padStart(11)).join(" ")}`);
  for (const f of [(c: Counts) => c.calls, (c: Counts) => c.byPlace])
    for (const k of keys(f)) console.log(`  ${k.padEnd(52)} ${VARIANTS.map((v) => String(f(results.get(v)!).get(k) ?? 0).padStart(11)).join(" ")}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
