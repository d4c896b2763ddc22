/**
 * `npm run profile -- [--scenario A|B] [--calls N] [--runs N] [--variants none,governance] [--top N] [--dump file] [--gc]`: where the
 * opencode process's JavaScript time goes, sampled inside the real host (docs/performance.md, "Profile").
 *
 * The opencode binary is Bun-compiled; it ignores `--cpu-prof`, but it honours `BUN_INSPECT=ws://host:port/path`: the
 * process opens JavaScriptCore's inspector on that socket. This script starts `opencode serve` so, connects, turns on
 * JSC's sampling profiler (`ScriptProfiler.startTracking` with samples) before the project's first request (the
 * plugin loads there) and stops it when the scenario's turn has finished. Every sample is the main JS thread's stack at
 * that moment (JSC samples about every millisecond while JavaScript runs), so sample counts are JS time.
 *
 * For each variant it prints: samples in all; samples with a frame of the plugin's bundle anywhere on the stack (the
 * plugin's own code, with whatever it called); and the host's functions whose self samples changed most between the
 * variants — the JavaScript the host runs because the plugin is there. Nothing is asserted.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { performance } from "node:perf_hooks";
import { serveOpencode, startScriptedModel } from "../test/harness/index.ts";
import { ensureOpencodeBinary, ensureWarmDeps } from "../test/harness/warm-cache.ts";
import {
  benchProject,
  benchRespond,
  primeTranspilerCache,
  setBaselineBundle,
  scenarioPrompt,
  transpilerCacheEnv,
  type Scenario,
  type Variant,
} from "./bench/host.ts";
import { findProcessByCwd, threadCpuMs } from "./bench/proc.ts";
import { stats } from "./bench/stats.ts";
import { option, flag } from "./bench/cli-args.ts";

const SCENARIO = (option("--scenario") ?? "B") as Scenario;
const CALLS = Number(option("--calls") ?? (SCENARIO === "A" ? "100" : "20"));
const RUNS = Number(option("--runs") ?? "3");
const TOP = Number(option("--top") ?? "25");
const VARIANTS = (option("--variants") ?? "none,governance").split(",") as Variant[];
/** `--eval <expression>`: evaluated in the host after each run (e.g. figures an instrumented build keeps in a global). */
const EVAL = option("--eval");
const baseline = option("--baseline");
if (baseline) setBaselineBundle(baseline);
/** `--dump <file>`: every run's samples as JSON (variant, stack frames), for an analysis this script does not print. */
const DUMP = option("--dump");
/**
 * `--sources <dir>`: the plugin's scripts as the host's Bun transpiled them, saved there once (sample frames name lines
 * and columns of that text, not of dist/).
 */
const SOURCES = option("--sources");
/** `--host-sources <regex>`: with `--sources`, also the host's own scripts whose URL matches (its chunks in the binary). */
const hostSources = option("--host-sources");
const HOST_SOURCES = hostSources ? new RegExp(hostSources) : undefined;
let sourcesSaved = false;
async function saveSources(client: Awaited<ReturnType<typeof inspector>>): Promise<void> {
  if (sourcesSaved || !SOURCES) return;
  sourcesSaved = true;
  const scripts: { scriptId: string; url: string }[] = [];
  client.on("Debugger.scriptParsed", (p) => scripts.push(p as { scriptId: string; url: string }));
  await client.send("Debugger.enable");
  await new Promise((r) => setTimeout(r, 500));
  mkdirSync(SOURCES, { recursive: true });
  for (const s of scripts.filter((x) => PLUGIN_URL.test(x.url) || HOST_SOURCES?.test(x.url))) {
    const { scriptSource } = (await client.send("Debugger.getScriptSource", { scriptId: s.scriptId })) as { scriptSource: string };
    writeFileSync(`${SOURCES}/${s.url.replace(/^.*\//, "")}`, scriptSource);
  }
  await client.send("Debugger.disable");
}
/** `--threads-only`: no inspector and no sampling (the sampler slows the host down): CPU per thread only, runs interleaved. */
const THREADS_ONLY = flag("--threads-only");
/**
 * `--gc`: no sampling; the inspector's Heap domain reports every garbage collection of the run (full or eden, and how
 * long it took): whether the plugin makes the host collect more often.
 */
const GC = flag("--gc");
/** A frame of the plugin: its bundle (dist/plugin/index.js and the chunks beside it, or a baseline copy) by file name. */
const PLUGIN_URL = /dist\/plugin\/[^/]*\.js$|bundle[^/]*\.js$/;

type Frame = { name: string; url: string; line: number; column: number };
type Sample = { timestamp: number; frames: Frame[] };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** A minimal client of the WebKit inspector protocol: numbered commands, their replies, and events by name. */
async function inspector(url: string) {
  const WS = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  if (!WS) throw new Error("no WebSocket in this node: run with `node --experimental-websocket` (npm run profile does)");
  const ws = new WS(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error(`cannot connect to the host's inspector at ${url}`)));
  });
  let next = 1;
  const pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
  const waiting = new Map<string, (params: unknown) => void>();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; method?: string; params?: unknown; result?: unknown; error?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg);
    else if (msg.method) waiting.get(msg.method)?.(msg.params);
  });
  return {
    send(method: string, params: object = {}): Promise<unknown> {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) =>
        pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${JSON.stringify(m.error)}`)) : resolve(m.result))),
      );
    },
    once(method: string): Promise<unknown> {
      return new Promise((resolve) => waiting.set(method, resolve));
    },
    /** Every event `method` from now on (replaces a `once` waiter of the same method). */
    on(method: string, listener: (params: unknown) => void): void {
      waiting.set(method, listener);
    },
    close: () => ws.close(),
  };
}

type Collection = { type: "full" | "partial"; startTime: number; endTime: number };
type Run = { samples: Sample[]; ms: number; threads: Map<string, number>; collections: Collection[] };

async function profiledRun(model: Awaited<ReturnType<typeof startScriptedModel>>, variant: Variant): Promise<Run> {
  const project = benchProject(model, variant);
  const url = `ws://127.0.0.1:${await freePort()}/profile`;
  try {
    const inspect = THREADS_ONLY ? {} : { BUN_INSPECT: url };
    const serve = await serveOpencode(project, { env: { ...inspect, ...transpilerCacheEnv(variant, project) } });
    try {
      // With --threads-only no inspector is opened: the sampler slows the host down.
      const client = THREADS_ONLY ? undefined : await inspector(url);
      const collections: Collection[] = [];
      if (GC) {
        client?.on("Heap.garbageCollected", (p) => collections.push((p as { collection: Collection }).collection));
        await client?.send("Heap.enable");
      } else await client?.send("ScriptProfiler.startTracking", { includeSamples: true });
      const started = performance.now();
      const session = await serve.http.createSession();
      await serve.http.prompt(session.id, scenarioPrompt(SCENARIO, CALLS));
      const ms = performance.now() - started;
      const pid = findProcessByCwd(project.dir);
      const threads = pid === undefined ? new Map<string, number>() : threadCpuMs(pid);
      if (!client) return { samples: [], ms, threads, collections };
      if (EVAL) {
        const value = (await client.send("Runtime.evaluate", { expression: EVAL, returnByValue: true })) as { result?: { value?: unknown } };
        console.log(`  ${variant} --eval: ${JSON.stringify(value.result?.value)}`);
      }
      if (GC) {
        client.close();
        return { samples: [], ms, threads, collections };
      }
      if (SOURCES) await saveSources(client);
      const done = client.once("ScriptProfiler.trackingComplete");
      await client.send("ScriptProfiler.stopTracking");
      const result = (await done) as { samples?: { stackTraces?: { timestamp: number; stackFrames: Frame[] }[] } };
      client.close();
      const traces = result.samples?.stackTraces ?? [];
      return { samples: traces.map((t) => ({ timestamp: t.timestamp, frames: t.stackFrames })), ms, threads, collections };
    } finally {
      await serve.stop();
    }
  } finally {
    project.cleanup();
  }
}

/** Collections of one run by kind: how many (and eden ones per second of the run), and their summed duration (the inspector's times are in seconds). */
function gcLine(collections: Collection[], runMs: number): string {
  const of = (type: Collection["type"]) => collections.filter((c) => c.type === type);
  const ms = (list: Collection[]) => (list.reduce((n, c) => n + c.endTime - c.startTime, 0) * 1000).toFixed(0);
  const eden = of("partial");
  return `GC full ${of("full").length} (${ms(of("full"))} ms), eden ${eden.length} (${((eden.length * 1000) / runMs).toFixed(1)}/s, ${ms(eden)} ms)`;
}

const where = (f: Frame) => `${f.name || "(anonymous)"} ${f.url ? `${f.url.replace(/^.*\//, "")}:${f.line}` : "(native)"}`;
const isPlugin = (f: Frame) => PLUGIN_URL.test(f.url);

/** The top frame, and for a native one (no url: `Error`, `Map` …) the first frame with source that called it. */
function selfKey(frames: Frame[]): string | undefined {
  const top = frames[0];
  if (!top) return undefined;
  if (top.url) return where(top);
  const caller = frames.find((f) => f.url);
  return caller ? `${where(top)} ← ${where(caller)}` : where(top);
}

type Summary = { runs: number; total: number; plugin: number; selfByFrame: Map<string, number>; pluginByFrame: Map<string, number> };

function summarize(runs: Sample[][]): Summary {
  const selfByFrame = new Map<string, number>();
  const pluginByFrame = new Map<string, number>();
  let total = 0;
  let plugin = 0;
  for (const samples of runs)
    for (const s of samples) {
      total++;
      const key = selfKey(s.frames);
      if (key) selfByFrame.set(key, (selfByFrame.get(key) ?? 0) + 1);
      const ours = s.frames.find(isPlugin);
      if (ours) {
        plugin++;
        pluginByFrame.set(where(ours), (pluginByFrame.get(where(ours)) ?? 0) + 1);
      }
    }
  return { runs: runs.length, total, plugin, selfByFrame, pluginByFrame };
}

const perRun = (n: number, s: Summary) => (n / s.runs).toFixed(1);
const topOf = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);

async function main(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  primeTranspilerCache();
  const model = await startScriptedModel(benchRespond);
  const runs = new Map<Variant, Sample[][]>(VARIANTS.map((v) => [v, []]));
  const threads = new Map<Variant, Map<string, number>[]>(VARIANTS.map((v) => [v, []]));
  try {
    for (let i = 0; i < RUNS; i++)
      for (const variant of VARIANTS) {
        const r = await profiledRun(model, variant);
        runs.get(variant)!.push(r.samples);
        threads.get(variant)!.push(r.threads);
        console.log(`run ${i + 1} ${variant.padEnd(10)} ${r.samples.length} samples, ${r.ms.toFixed(0)} ms${GC ? `, ${gcLine(r.collections, r.ms)}` : ""}`);
      }
  } finally {
    await model.close();
  }
  if (DUMP) writeFileSync(DUMP, JSON.stringify(Object.fromEntries(runs)));
  const sums = new Map([...runs].map(([v, r]) => [v, summarize(r)]));
  console.log(`\nscenario ${SCENARIO} (${CALLS} reads), ${RUNS} runs per variant; samples ≈ ms of JS on the host's main thread, per run`);
  for (const [v, s] of sums)
    console.log(`  ${v.padEnd(10)} all ${perRun(s.total, s).padStart(7)}   with a plugin frame on the stack ${perRun(s.plugin, s).padStart(6)}`);
  console.log(`\nCPU by thread of the opencode process from spawn to the turn's end (ms, mean per run; /proc/<pid>/task/*/stat)`);
  const names = [...new Set([...threads.values()].flatMap((l) => l.flatMap((m) => [...m.keys()])))].sort();
  console.log(`  ${"thread".padEnd(16)} ${VARIANTS.map((v) => v.padStart(11)).join(" ")}`);
  for (const name of names) {
    const cells = VARIANTS.map((v) => {
      const list = threads.get(v)!;
      return (list.reduce((n, m) => n + (m.get(name) ?? 0), 0) / Math.max(1, list.length)).toFixed(0).padStart(11);
    });
    console.log(`  ${name.padEnd(16)} ${cells.join(" ")}`);
  }
  const totals = (v: Variant) => threads.get(v)!.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  console.log(`  ${"all (median)".padEnd(16)} ${VARIANTS.map((v) => stats(totals(v)).median.toFixed(0).padStart(11)).join(" ")}`);
  const mains = (v: Variant) => threads.get(v)!.map((m) => m.get("(main)") ?? 0);
  console.log(`  ${"(main) median".padEnd(16)} ${VARIANTS.map((v) => stats(mains(v)).median.toFixed(0).padStart(11)).join(" ")}`);
  for (const [v, s] of sums) {
    if (s.plugin === 0) continue;
    console.log(`\n  ${v}: the plugin's outermost-called functions (first plugin frame from the top), samples per run`);
    for (const [k, n] of topOf(s.pluginByFrame, TOP)) console.log(`    ${perRun(n, s).padStart(6)}  ${k}`);
  }
  const [a, b] = VARIANTS.map((v) => sums.get(v)!);
  if (a && b) {
    const keys = new Set([...a.selfByFrame.keys(), ...b.selfByFrame.keys()]);
    const delta = [...keys].map((k) => [k, (b.selfByFrame.get(k) ?? 0) / b.runs - (a.selfByFrame.get(k) ?? 0) / a.runs] as const);
    console.log(`\n  self samples per run, ${VARIANTS[1]} − ${VARIANTS[0]}: largest increases`);
    for (const [k, d] of delta.sort((x, y) => y[1] - x[1]).slice(0, TOP)) console.log(`    ${d >= 0 ? "+" : ""}${d.toFixed(1).padStart(6)}  ${k}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
