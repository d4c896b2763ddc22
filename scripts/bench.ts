/**
 * `npm run bench` (`-- --quick` for day-to-day use, `-- --lock /tmp/e2e.lock` to take a shared lock round by round):
 * what governance costs a user, measured in one run and printed (no asserts, no thresholds). docs/performance.md
 * records a full run and what each figure means.
 *
 * (1) Real host, interleaved, on each host line of `--hosts 1,2`: `opencode serve` (OpenCode 1: the version in
 *     package.json; OpenCode 2: the released 2.0.15 in .e2e-cache/) with no plugin, with an empty-hooks
 *     plugin (the host's own cost of calling hooks) and with this plugin; scenario A: one session reading 100 DIFFERENT
 *     files (101 model requests; distinct calls, as real work makes — the loop guard rightly stops a session that reads
 *     one file a hundred times); scenario B: a `task` subagent (`general`) reading 20 different files (`--scenarios A`
 *     runs A alone). 7 counted rounds by default after a warm-up; every round runs the combinations in a rotated
 *     order, each in a fresh project and a fresh process; ratios are per round against the no-plugin run of the same
 *     round (median and range), and for governance also against the empty-hooks plugin of the same round. The
 *     comparison table gives per variant: wall, CPU and peak RSS ratios, the median gap between model requests (one
 *     step of the host: response end → next request), and the governance text per request (system prompt + tools). Per run: wall of the prompt, CPU of the opencode process tree (/proc utime + stime,
 *     children included), peak RSS (VmHWM) and steady RSS (VmRSS 0.5 s after the turn), start-up (spawn → first
 *     session created: the plugin loads on the project's first request), and the governance bytes in each model
 *     request (prefix + governance tool schemas + task context blocks, from the scripted model's recorded requests),
 *     and the prompt cache figures: per session, requests whose system prompt or tool list changed against the
 *     previous one, and the bytes after the first changed byte (what a provider bills again).
 * (2) In-process: both transforms at 10, 200 and 2,000 messages; tool hooks with 20 sessions at once; the shipped
 *     plugin's start with 10,000 records on disk. p99 of wall time on a shared 2-core machine is mostly the
 *     scheduler: a constant loop is timed alongside as the noise floor.
 * (2b) Confinement (issue 41): what bubblewrap adds to one shell command, split by step, and the hook's own work.
 * (3) Stop latency in the real host: `opencode-governance stop` → the directive in the child's next tool result
 *     (child calling a tool every 100 ms), and → the confirmed stop of a child stuck in an endless stream.
 * (4) Under load: the load scenario of test/load (20 subagents at once, three CLI processes stopping and injecting)
 *     with its delivery latencies.
 * (5) Long-lived (`--only long`): one serve hosting 1,000 sessions over time, RSS and the plugin's heap and map sizes.
 */
import { confinementCost, type Step } from "./bench/confine-cost.ts";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { startScriptedModel } from "../test/harness/index.ts";
import { ensureOpencodeBinary, ensureWarmDeps } from "../test/harness/warm-cache.ts";
import { type HostUnderTest, hostUnderTest, opencode2Host } from "../test/harness/host-under-test.ts";
import { findBwrap } from "../governance/stop/sandbox-probe.ts";
import path from "node:path";
import { benchRespond, governanceBytes, hostRun, primeTranspilerCache, setBaselineBundle, type HostRun, type Scenario, type Variant } from "./bench/host.ts";
import { confinementHook, pluginStart, toolHooks, transforms } from "./bench/in-process.ts";
import { acquireLock } from "./bench/lock.ts";
import { fmt, ratioText, type Stats, stats } from "./bench/stats.ts";
import { cacheFigures } from "./bench/prompt-cache.ts";
import { stopLatency } from "./bench/stop-latency.ts";
import { longLived } from "./bench/long-lived.ts";
import { runLoadScenario } from "../test/load/load-scenario.ts";
import { flag, option } from "./bench/cli-args.ts";

const QUICK = flag("--quick");
const LOCK = option("--lock");
const only = (option("--only") ?? "host,inprocess,confine,stop,load").split(",");
const opt = (name: string, fallback: number) => Number(option(name) ?? fallback);
const ROUNDS = opt("--rounds", QUICK ? 2 : 7);
/** `--calls-a`/`--calls-b` shrink the scenarios when the machine is too loaded for 100 reads per run (see the doc). */
const CALLS: Record<Scenario, number> = { A: opt("--calls-a", QUICK ? 30 : 100), B: opt("--calls-b", QUICK ? 10 : 20), S: opt("--calls-s", QUICK ? 10 : 20) };
const WARMUP = flag("--no-warmup") ? 0 : 1;
/**
 * `--scenarios A`: only the 100-distinct-reads scenario (the issue-31 comparison), about half the time. `S` (not in the
 * default): one session running 20 different shell commands — each confined by bubblewrap under governance (issue 41).
 */
const SCENARIOS = (option("--scenarios") ?? "A,B").split(",") as Scenario[];
/** With --lock, take the lock once per this many rounds (each acquisition may wait for others' runs). */
const LOCK_EVERY = opt("--lock-every", 1);
/** `--variants none,loaded,governance`: which plugins to compare (default: none, empty, governance). */
const VARIANTS = (option("--variants") || "none,empty,governance").split(",") as Variant[];

const baseline = option("--baseline");
if (baseline) setBaselineBundle(baseline);

const log = (s = "") => console.log(s);

/**
 * `--hosts 1,2` (the default): OpenCode 1 (the version in package.json) and OpenCode 2 (the released 2.0.15 the test
 * prerequisites install, test/harness/opencode-2-binary.ts), one after the other, each with its own tables.
 */
const HOSTS = (option("--hosts") ?? "1,2").split(",");

async function realHosts(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  if (HOSTS.includes("1")) await realHost(hostUnderTest());
  if (HOSTS.includes("2")) {
    const two = opencode2Host();
    if (two.ok) await realHost(two.host);
    else log(`\n(1) real host — OpenCode 2 not measured: ${two.reason}`);
  }
}

async function realHost(host: HostUnderTest): Promise<void> {
  primeTranspilerCache(host.bin);
  const model = await startScriptedModel(benchRespond);
  const runs: (HostRun & { round: number })[] = [];
  const combos = SCENARIOS.flatMap((s) => VARIANTS.map((v) => [v, s] as const));
  let release: () => void = () => undefined;
  log(
    `\n(1) real host — opencode ${host.version} serve (${path.relative(process.cwd(), host.bin)}); scenario A: one session reading ${CALLS.A} different files; B: a general subagent reading ${CALLS.B} different files; S: one session running ${CALLS.S} different shell commands (confined under governance when bwrap runs: ${findBwrap() ?? "no bwrap"}); scenarios ${SCENARIOS.join(", ")}; ${ROUNDS} counted rounds after ${WARMUP} warm-up, order rotated per round`,
  );
  try {
    for (let round = 1 - WARMUP; round <= ROUNDS; round++) {
      if ((round - 1 + WARMUP) % LOCK_EVERY === 0) release = await acquireLock(LOCK);
      try {
        const order = combos.map((_, i) => combos[(i + round) % combos.length]!);
        for (const [variant, scenario] of order) {
          const r = await hostRun(model, variant, scenario, CALLS[scenario], host);
          if (round > 0) runs.push({ ...r, round });
          log(
            `  ${round === 0 ? "warm-up" : `round ${round}`} ${host.version} load ${os.loadavg()[0]!.toFixed(1)} ${scenario} ${variant.padEnd(10)} start ${fmt(r.startupMs).padStart(5)} ms  run ${fmt(r.runMs).padStart(6)} ms  cpu ${fmt(r.cpuMs).padStart(6)} ms  peak ${fmt(r.peakRssMiB, 1)} MiB  steady ${fmt(r.steadyRssMiB, 1)} MiB${r.clean ? "" : `  <-- NOT CLEAN: ${r.problem}`}`,
          );
        }
      } finally {
        if ((round + WARMUP) % LOCK_EVERY === 0 || round === ROUNDS) release();
      }
    }
  } finally {
    release();
    await model.close();
  }

  for (const scenario of SCENARIOS) {
    comparison(runs, scenario, host);
    log(`\n  scenario ${scenario} — medians (absolute) and per-round ratios vs no plugin: median (min–max)`);
    log(
      `  ${"variant".padEnd(11)} ${"wall".padEnd(22)} ${"CPU".padEnd(22)} ${"peak RSS".padEnd(22)} ${"steady RSS".padEnd(22)} ${"start-up".padEnd(22)} governance bytes/request (max)`,
    );
    const pick = (v: Variant, round: number) => runs.find((r) => r.variant === v && r.scenario === scenario && r.round === round && r.clean);
    for (const variant of VARIANTS) {
      const mine = runs.filter((r) => r.variant === variant && r.scenario === scenario && r.clean);
      const col = (f: (r: HostRun) => number, unit: string, digits = 0) => {
        const ratios = mine.flatMap((r) => {
          const base = pick("none", r.round);
          return base ? [f(r) / f(base)] : [];
        });
        return `${fmt(stats(mine.map(f)).median, digits)} ${unit} ${variant === "none" ? "" : ratioText(ratios)}`.padEnd(22);
      };
      const bytes = mine.flatMap((r) => r.requests.map(governanceBytes));
      const root = bytes.length ? Math.max(...bytes.map((b) => b.total)) : 0;
      const b = bytes.reduce((m, x) => (x.total > m.total ? x : m), { prefix: 0, note: 0, tools: 0, block: 0, total: 0 });
      log(
        `  ${variant.padEnd(11)} ${col((r) => r.runMs, "ms")} ${col((r) => r.cpuMs, "ms")} ${col((r) => r.peakRssMiB, "MiB", 1)} ${col((r) => r.steadyRssMiB, "MiB", 1)} ${col((r) => r.startupMs, "ms")} ${root} B (prefix ${b.prefix} + note ${b.note} + tools ${b.tools} + block ${b.block})  [${mine.length} clean runs]`,
      );
    }
    log(`  where the wall time went outside the model (medians, ms): prompt → first request | gaps between steps (sum) | last answer → prompt done`);
    for (const variant of VARIANTS) {
      const mine = runs.filter((r) => r.variant === variant && r.scenario === scenario && r.clean);
      const m = (f: (r: HostRun) => number) => fmt(stats(mine.map(f)).median).padStart(6);
      log(`  ${variant.padEnd(11)} ${m((r) => r.gaps.firstMs)} | ${m((r) => r.gaps.betweenMs)} | ${m((r) => r.gaps.lastMs)}`);
    }
    log(
      `  prompt cache (vs the previous request of the same session): requests whose system prompt or tool list changed | bytes a provider bills again (after the first changed byte) per request | request size per request — medians over runs`,
    );
    for (const variant of VARIANTS) {
      const mine = runs.filter((r) => r.variant === variant && r.scenario === scenario && r.clean).map((r) => cacheFigures(r.requests));
      const m = (f: (c: ReturnType<typeof cacheFigures>) => number) => stats(mine.map(f)).median;
      log(
        `  ${variant.padEnd(11)} ${fmt(m((c) => c.prefixChanges)).padStart(3)} of ${fmt(m((c) => c.compared))} | ${fmt(m((c) => c.rebilledBytes / Math.max(1, c.compared))).padStart(7)} B | ${fmt(m((c) => c.requestBytes / Math.max(1, c.compared))).padStart(7)} B`,
      );
    }
    if (scenario === "B") {
      const gov = runs.filter((r) => r.variant === "governance" && r.scenario === "B" && r.clean);
      const child = gov.flatMap((r) =>
        r.requests.filter((q) => q.messages.some((m) => m.role === "user" && JSON.stringify(m.content).includes("BENCH-B-CHILD"))).map(governanceBytes),
      );
      const worst = child.reduce((m, x) => (x.total > m.total ? x : m), { prefix: 0, note: 0, tools: 0, block: 0, total: 0 });
      log(
        `  subagent requests: max ${worst.total} B of governance text (prefix ${worst.prefix} + note ${worst.note} + tools ${worst.tools} + block ${worst.block})`,
      );
    }
  }
}

/**
 * The comparison of issue 31, one line per variant: wall, CPU and peak RSS as the median of per-round ratios against
 * no plugin (and, for every plugin but the empty one, against the empty-hooks plugin of the same round), the median
 * per-step gap between model requests, and the governance text in one request: system prompt (prefix) + tools (the
 * governance tool's schema), the largest over the run's requests.
 */
function comparison(runs: (HostRun & { round: number })[], scenario: Scenario, host: HostUnderTest): void {
  const mine = (v: Variant) => runs.filter((r) => r.variant === v && r.scenario === scenario && r.clean);
  const pick = (v: Variant, round: number) => runs.find((r) => r.variant === v && r.scenario === scenario && r.round === round && r.clean);
  const ratios = (v: Variant, base: Variant, f: (r: HostRun) => number) =>
    mine(v).flatMap((r) => {
      const b = pick(base, r.round);
      return b ? [f(r) / f(b)] : [];
    });
  const requests = stats(mine(VARIANTS[0]!).map((r) => r.requests.length)).median;
  log(
    `\n  opencode ${host.version}, scenario ${scenario} — comparison (${fmt(requests)} model requests per run; ratios: median of per-round ratios (min–max))`,
  );
  log(
    `  ${"variant".padEnd(11)} ${"wall".padEnd(18)} ${"CPU".padEnd(18)} ${"peak RSS".padEnd(18)} ${"vs empty: wall / CPU / RSS".padEnd(27)} ${"step gap".padEnd(10)} governance text / request (system + tools)`,
  );
  const fields: [string, (r: HostRun) => number][] = [
    ["wall", (r) => r.runMs],
    ["CPU", (r) => r.cpuMs],
    ["RSS", (r) => r.peakRssMiB],
  ];
  for (const v of VARIANTS) {
    const runsOf = mine(v);
    const cells =
      v === "none"
        ? [
            `${fmt(stats(runsOf.map((r) => r.runMs)).median)} ms`,
            `${fmt(stats(runsOf.map((r) => r.cpuMs)).median)} ms`,
            `${fmt(stats(runsOf.map((r) => r.peakRssMiB)).median)} MiB`,
          ]
        : fields.map(([, f]) => ratioText(ratios(v, "none", f)));
    const vsEmpty =
      v === "none" || v === "empty" || !VARIANTS.includes("empty") ? "–" : fields.map(([, f]) => fmt(stats(ratios(v, "empty", f)).median, 3)).join(" / ");
    const gap = `${fmt(stats(runsOf.map((r) => r.gaps.stepMedianMs)).median, 1)} ms`;
    const text = runsOf.flatMap((r) => r.requests.map(governanceBytes));
    const worst = text.reduce((m, x) => (x.prefix + x.tools > m.prefix + m.tools ? x : m), { prefix: 0, note: 0, tools: 0, block: 0, total: 0 });
    const bytes = worst.prefix + worst.tools === 0 ? "0" : `${worst.prefix} + ${worst.tools} = ${worst.prefix + worst.tools} B`;
    log(`  ${v.padEnd(11)} ${cells.map((c) => c.padEnd(18)).join(" ")} ${vsEmpty.padEnd(27)} ${gap.padEnd(10)} ${bytes}  [${runsOf.length} clean runs]`);
  }
}

function noiseFloor(): ReturnType<typeof stats> {
  const samples: number[] = [];
  let x = 0;
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    for (let j = 0; j < 20_000; j++) x += j;
    samples.push(performance.now() - t0);
  }
  if (x < 0) log("");
  return stats(samples);
}

async function inProcess(): Promise<void> {
  const it = QUICK ? 200 : 2000;
  log(`\n(2) in-process (node ${process.version}, ${it} iterations each after 20 warm-up)`);
  const floor = noiseFloor();
  log(
    `  noise floor: a constant ~0.04 ms loop measures median ${fmt(floor.median, 3)} ms, p99 ${fmt(floor.p99, 3)} ms, max ${fmt(floor.max, 1)} ms on this machine now`,
  );
  for (const f of await transforms([10, 200, 2000], it)) {
    log(
      `  ${String(f.size).padStart(5)} messages: messages.transform median ${fmt(f.messages.median, 3)} p99 ${fmt(f.messages.p99, 3)} ms; system.transform median ${fmt(f.system.median, 3)} p99 ${fmt(f.system.p99, 3)} ms`,
    );
  }
  const hooks = await toolHooks(20, QUICK ? 20 : 50);
  log(
    `  tool hooks, 20 sessions at once: before median ${fmt(hooks.before.median, 3)} p99 ${fmt(hooks.before.p99, 3)} ms; after median ${fmt(hooks.after.median, 3)} p99 ${fmt(hooks.after.p99, 3)} ms`,
  );
  for (const n of [1, 10_000]) {
    const st = await pluginStart(n, 5);
    log(`  plugin start (dist bundle's server()) with ${String(n).padStart(6)} records on disk: median ${fmt(st.median, 1)} ms, max ${fmt(st.max, 1)} ms`);
  }
}

/**
 * (2b) `--only confine`: what confinement adds to one agent shell command, split by step (scripts/bench/confine-cost.ts),
 * and its own work inside the hook (in-process.ts `confinementHook`).
 */
async function confinement(): Promise<void> {
  const n = opt("--confine-commands", QUICK ? 40 : 200);
  const c = confinementCost(n);
  log(`\n(2b) confinement (issue 41), per agent shell command`);
  if (!c) {
    log("  no bwrap on PATH here (apt-get install -y bubblewrap): not measured");
    return;
  }
  log(
    `  \`bash -c true\` bare and as the plugin rewrites it, as ${c.user}; ${c.wall.bare.n} interleaved blocks of 10 per step; medians per command (wall: the block's; CPU: user + system of the commands, bash's \`times\`)`,
  );
  const rows: [string, Step, Step | undefined][] = [
    ["bare: bash -c true", "bare", undefined],
    ['+ the wrapped shell (bwrap runs "$0" -c)', "shell", "bare"],
    ["+ bwrap's start-up (namespace, --dev-bind / /)", "bwrap", "shell"],
    [`+ the protected entries (${c.entries} mounts)`, "entries", "bwrap"],
    [`+ every folder above them pinned (${c.allPins} mounts; before)`, "allPins", "entries"],
    [`+ only the renameable ones pinned (${c.pins} mounts)`, "confined", "entries"],
    ["  the same entered through BASH_ENV (0071)", "bashEnv", "confined"],
  ];
  const cell = (m: Record<Step, Stats>, s: Step, base: Step | undefined) =>
    (base ? `${m[s].median - m[base].median >= 0 ? "+" : ""}${fmt(m[s].median - m[base].median, 2)}` : fmt(m[s].median, 2)).padStart(7);
  log(`  ${"step".padEnd(52)} wall ms   CPU ms`);
  for (const [label, s, base] of rows) log(`  ${label.padEnd(52)} ${cell(c.wall, s, base)}  ${cell(c.cpu, s, base)}`);
  log(`  ${"= added per shell command before (all pins − bare)".padEnd(52)} ${cell(c.wall, "allPins", "bare")}  ${cell(c.cpu, "allPins", "bare")}`);
  log(
    `  ${"= added per shell command, rewrite (confined − bare)".padEnd(52)} ${cell(c.wall, "confined", "bare")}  ${cell(c.cpu, "confined", "bare")}   (confined: wall p99 ${fmt(c.wall.confined.p99, 1)} ms, best ${fmt(c.wall.confined.min, 1)} ms; bare best ${fmt(c.wall.bare.min, 1)} ms)`,
  );
  log(
    `  ${"= added per bash command now (BASH_ENV − bare)".padEnd(52)} ${cell(c.wall, "bashEnv", "bare")}  ${cell(c.cpu, "bashEnv", "bare")}   (wall p99 ${fmt(c.wall.bashEnv.p99, 1)} ms, best ${fmt(c.wall.bashEnv.min, 1)} ms)`,
  );
  const hook = await confinementHook(QUICK ? 500 : 5000);
  if (hook)
    log(
      `  in the hook (no process): the command's rewrite median ${fmt(hook.rewrite.median * 1000, 1)} µs; a file tool's real-path check: read ${fmt(hook.read.median * 1000, 1)} µs, write ${fmt(hook.write.median * 1000, 1)} µs (p99 ${fmt(hook.read.p99 * 1000, 0)} / ${fmt(hook.write.p99 * 1000, 0)} µs)`,
    );
}

async function stops(): Promise<void> {
  const runs = QUICK ? 3 : 10;
  const release = await acquireLock(LOCK);
  try {
    const r = await stopLatency(runs);
    log(`\n(3) stop latency, ${runs} runs each (stop.deadline 2s), from starting \`opencode-governance stop\`:`);
    log(`  → directive in the looping child's next tool result: median ${fmt(r.directive.median)} ms, max ${fmt(r.directive.max)} ms (n=${r.directive.n})`);
    log(`  → confirmed stop of a child stuck in an endless stream: median ${fmt(r.confirmed.median)} ms, max ${fmt(r.confirmed.max)} ms (n=${r.confirmed.n})`);
    for (const f of r.failures) log(`  failure: ${f}`);
  } finally {
    release();
  }
}

async function underLoad(): Promise<void> {
  const size = { subagents: QUICK ? 6 : 20, callsEach: QUICK ? 15 : 50 };
  // The same load on an ungoverned OpenCode first: what one step costs the host itself (the directive latency is
  // two of those steps, docs/performance.md "Under load").
  for (const plugin of ["none", "local"] as const) {
    const release = await acquireLock(LOCK);
    try {
      const r = await runLoadScenario({ ...size, plugin });
      const what = plugin === "none" ? "no plugin, no directives" : "governance, 3 CLI processes stopping/injecting at random";
      log(`\n(4) under load: ${r.subagents} subagents at once × ${r.callsEach} tool calls — ${what}`);
      for (const line of r.summary) log(`  ${line}`);
    } finally {
      release();
    }
  }
}

/**
 * (5) `--only long [--long-sessions 1000] [--long-runs none,local,idle]`: not in the default run (~8 min a run unloaded).
 * `idle` is the plugin with `resume.minIdle: 2m`: a session idle that long is forgotten by the next sweep, as every
 * session is after 1 h by default — what the maps hold once sessions are done, within the bench's minutes.
 */
async function longLivedBench(): Promise<void> {
  const count = opt("--long-sessions", QUICK ? 200 : 1000);
  const every = Math.max(1, Math.round(count / 10));
  const runs = (option("--long-runs") ?? "none,local,idle").split(",") as ("none" | "local" | "idle")[];
  const model = await startScriptedModel(benchRespond);
  log(`\n(5) long-lived — one opencode serve hosting ${count} sessions one after another (one short turn each); RSS every ${every}`);
  log("  (JS heap: the whole opencode process's, as the plugin reads it at its periodic sweep; maps: the plugin's per-session maps)");
  try {
    for (const run of runs) {
      const release = await acquireLock(LOCK);
      try {
        const yaml = run === "idle" ? "resume:\n  minIdle: 2m\n" : undefined;
        for (const s of await longLived(model, run === "none" ? "none" : "local", count, every, yaml)) {
          const p = s.plugin ? `  JS heap ${s.plugin.heapUsedMiB} MiB  maps ${JSON.stringify(nonZero(s.plugin.stats))}` : "";
          const label = { none: "no plugin          ", local: "governance         ", idle: "governance, 2m idle" }[run];
          log(`  ${label} after ${String(s.sessions).padStart(5)} sessions: RSS ${fmt(s.rssMiB)} MiB${p}`);
        }
      } finally {
        release();
      }
    }
  } finally {
    await model.close();
  }
}

/** Only the maps that hold something (all the others are 0). */
const nonZero = (stats: Record<string, number>) => Object.fromEntries(Object.entries(stats).filter(([, v]) => v !== 0));

async function main(): Promise<void> {
  const started = performance.now();
  const cpus = os.cpus();
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");
  log(
    `opencode-governance bench${QUICK ? " --quick" : ""} — ${new Date().toISOString()}, node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? "cpu"}`,
  );
  log(`load average at start (1/5/15 min): ${load()} — other work on the machine shows up in every figure below`);
  if (only.includes("inprocess")) await inProcess();
  if (only.includes("confine")) await confinement();
  if (only.includes("host")) await realHosts();
  if (only.includes("stop")) await stops();
  if (only.includes("load")) await underLoad();
  if (only.includes("long")) await longLivedBench();
  log(`\nload average at end (1/5/15 min): ${load()}; total bench time ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
