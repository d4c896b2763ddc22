/**
 * `npm run bench`: what governance costs, measured once on this machine and printed (no asserts, no thresholds).
 *
 * (a) In-process hot path: the hooks OpenCode awaits on every tool call (`tool.execute.before` + `.after`) and on
 *     every model step (`experimental.chat.system.transform`), called directly on a plugin Runtime over a temp project,
 *     with a fake SDK layer (there is no server). Shows the plugin's own latency, file locking and atomic writes
 *     included, and the bytes the governance prefix adds to every model request.
 * (b) Real host: the same scripted 30-tool-call session through the real `opencode run`, with the built plugin and
 *     without it, 3 runs each in alternating pairs, so the ratio shows what a user would feel end to end. A fresh
 *     project per run; process start-up (~3 s) is included because a user pays it too.
 *
 * Figures from one run on a shared machine are noisy; docs/benchmarks.md records one such run.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Runtime } from "../plugin/runtime.ts";
import { onEvent } from "../plugin/hooks/event.ts";
import { systemTransform } from "../plugin/hooks/system-transform.ts";
import { toolAfter } from "../plugin/hooks/tool-after.ts";
import { toolBefore } from "../plugin/hooks/tool-before.ts";
import type { OpencodeApi } from "../plugin/opencode-api.ts";
import {
  auditEvents,
  createTestProject,
  runOpencode,
  startScriptedModel,
  type ModelRequest,
  type Reply,
  type TestProject,
} from "../test/harness/index.ts";
import { ensureOpencodeBinary, ensureWarmDeps, opencodeVersion } from "../test/harness/warm-cache.ts";

const HOT_ITERATIONS = 500;
const HOT_WARMUP = 20;
const HOST_TOOL_CALLS = 30;
const HOST_RUNS_PER_MODE = 3;
/** Keeps `npm run bench` near 3 minutes on a loaded machine: no new with/without pair starts once this is spent. */
const HOST_BUDGET_MS = 150_000;

type Stats = { median: number; p90: number; p99: number; min: number; max: number };

/**
 * Nearest-rank p90/p99 (each one a time that was actually measured); the median is the middle sample, or the mean
 * of the two middle ones for an even count (with 2 host runs, nearest-rank would just report the faster one).
 */
function stats(samples: readonly number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, p90: at(90), p99: at(99), min: s[0]!, max: s.at(-1)! };
}

const ms = (n: number, digits = 3) => `${n.toFixed(digits)} ms`;

function row(label: string, st: Stats): string {
  return `  ${label.padEnd(34)} median ${ms(st.median).padStart(10)}   p90 ${ms(st.p90).padStart(10)}   p99 ${ms(st.p99).padStart(10)}   max ${ms(st.max).padStart(10)}`;
}

/** The SDK layer with no server behind it: every call succeeds at once, so only governance's own work is timed. */
const fakeApi: OpencodeApi = {
  abort: async () => true,
  status: async () => ({}),
  parentOf: async () => ({ parentId: null, agent: null }),
  toast: async () => undefined,
};

async function hotPath(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "ocg-bench-"));
  try {
    const client = {} as ConstructorParameters<typeof Runtime>[0]["client"];
    const gov = new Runtime({ directory: dir, client }, { api: fakeApi });
    await gov.start();
    const sessionID = "ses_bench0000000000000000000001";
    await onEvent(gov, { type: "session.created", properties: { sessionID, info: { id: sessionID, parentID: null } } });

    const before: number[] = [];
    const after: number[] = [];
    const toolCall: number[] = [];
    const step: number[] = [];
    let prefixBytes = 0;
    for (let i = 0; i < HOT_WARMUP + HOT_ITERATIONS; i++) {
      const input = { tool: "bash", sessionID, callID: `call_${i}` };
      const t0 = performance.now();
      await toolBefore(gov, input, { args: { command: "ls" } });
      const t1 = performance.now();
      await toolAfter(gov, input, { title: "ls", output: "README.md\npackage.json\n", metadata: {} });
      const t2 = performance.now();
      const system: string[] = [];
      await systemTransform(gov, { sessionID }, { system });
      const t3 = performance.now();
      if (i < HOT_WARMUP) continue;
      before.push(t1 - t0);
      after.push(t2 - t1);
      toolCall.push(t2 - t0);
      step.push(t3 - t2);
      prefixBytes = Buffer.byteLength(system.join("\n"), "utf8");
    }
    // Hot-path events are written behind (batched); this is the one durable write that carries them all.
    const flushStarted = performance.now();
    await gov.flush();
    const flushMs = performance.now() - flushStarted;
    const record = await gov.ctx.store.read(sessionID);
    await gov.dispose();

    console.log(`\n(a) in-process hot path — ${HOT_ITERATIONS} iterations after ${HOT_WARMUP} warm-up, fake SDK, temp project on ${os.tmpdir()}`);
    console.log(row("tool.execute.before", stats(before)));
    console.log(row("tool.execute.after", stats(after)));
    console.log(row("per tool call (before + after)", stats(toolCall)));
    console.log(row("per model step (system.transform)", stats(step)));
    console.log(`  governance prefix added to every model request: ${prefixBytes} bytes (UTF-8), ~${Math.round(prefixBytes / 4)} tokens at 4 bytes/token`);
    console.log(`  write-behind flush of the pending events: ${flushMs.toFixed(3)} ms (hot-path events are written at most once a second per session)`);
    console.log(`  record after the flush: ${record?.counters.toolCalls ?? "?"} tool calls, ${record?.counters.modelSteps ?? "?"} model steps counted`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One `echo i` per step until the session holds 30 tool results, then a final answer (stateless: driven by messages). */
function thirtyBashCalls(req: ModelRequest): Reply {
  const done = req.messages.filter((m) => m.role === "tool").length;
  if (done < HOST_TOOL_CALLS) return { toolCalls: [{ name: "bash", args: { command: `echo ${done + 1}`, description: `step ${done + 1}` } }] };
  return { text: "All 30 steps done." };
}

/**
 * `ms` is what the user waits (process start to exit). `startMs` (until the first model request: start-up, config,
 * plugin load) and `stepMs` (median gap between consecutive model requests: one tool call with its hooks, snapshot
 * and model round trip) split it, and are far less sensitive to a noisy neighbour than the total.
 */
type HostRun = { mode: "local" | "none"; ms: number; startMs: number; stepMs: number; code: number | null; toolResults: number; pluginStarted: boolean };

async function realHost(): Promise<void> {
  ensureOpencodeBinary();
  ensureWarmDeps();
  const model = await startScriptedModel(thirtyBashCalls);
  const projects: TestProject[] = [];
  const once = async (mode: "local" | "none"): Promise<HostRun> => {
    const project = createTestProject({ modelUrl: model.url, plugin: mode, files: { "README.md": "# bench\n" } });
    projects.push(project);
    const from = model.requests.length;
    const startedAt = Date.now();
    const result = await runOpencode(project, ["Run the thirty steps."], { timeoutMs: 120_000 });
    const agent = model.requests.slice(from).filter((r) => r.kind === "agent");
    const last = agent.at(-1);
    const gaps = agent.slice(1).map((r, i) => r.receivedAt - agent[i]!.receivedAt);
    return {
      mode,
      ms: result.ms,
      startMs: agent[0] ? agent[0].receivedAt - startedAt : Number.NaN,
      stepMs: gaps.length > 0 ? stats(gaps).median : Number.NaN,
      code: result.code,
      toolResults: last?.messages.filter((m) => m.role === "tool").length ?? 0,
      pluginStarted: auditEvents(project.governanceDir).some((e) => e.type === "plugin_started"),
    };
  };
  try {
    console.log(`\n(b) real host — opencode ${opencodeVersion()} \`opencode run\`, ${HOST_TOOL_CALLS} bash calls (echo i) per session, scripted local model`);
    const started = performance.now();
    const runs: HostRun[] = [];
    for (let pair = 0; pair < HOST_RUNS_PER_MODE; pair++) {
      const elapsed = performance.now() - started;
      if (pair > 0 && elapsed + elapsed / pair > HOST_BUDGET_MS) {
        console.log(`  time budget (${HOST_BUDGET_MS / 1000} s) spent: stopping after ${pair} pair(s)`);
        break;
      }
      // Alternate which mode goes first so neither always pays for a cold file cache.
      for (const mode of pair % 2 === 0 ? (["local", "none"] as const) : (["none", "local"] as const)) {
        const run = await once(mode);
        runs.push(run);
        const problem = run.code !== 0 || run.toolResults !== HOST_TOOL_CALLS || run.pluginStarted !== (mode === "local");
        console.log(
          `  run ${runs.length}: plugin=${mode.padEnd(5)} wall ${ms(run.ms, 0).padStart(9)}  to first request ${ms(run.startMs, 0).padStart(8)}  per step ${ms(run.stepMs, 0).padStart(6)}  exit ${run.code}  tool results ${run.toolResults}  plugin_started ${run.pluginStarted}${problem ? "  <-- NOT A CLEAN RUN" : ""}`,
        );
      }
    }
    const median = (mode: "local" | "none", pick: (r: HostRun) => number) => stats(runs.filter((r) => r.mode === mode).map(pick)).median;
    const count = runs.filter((r) => r.mode === "local").length;
    const figures: [string, (r: HostRun) => number][] = [
      ["wall time", (r) => r.ms],
      ["start to first model request", (r) => r.startMs],
      ["per step (request to request)", (r) => r.stepMs],
    ];
    console.log(`  ${`medians over ${count} runs each`.padEnd(40)} ${"with plugin".padStart(11)} ${"without".padStart(10)}   with/without`);
    for (const [label, pick] of figures) {
      const withPlugin = median("local", pick);
      const without = median("none", pick);
      console.log(`  ${label.padEnd(40)} ${ms(withPlugin, 0).padStart(11)} ${ms(without, 0).padStart(10)}   ${(withPlugin / without).toFixed(3)}×`);
    }
  } finally {
    await model.close();
    for (const p of projects) p.cleanup();
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const cpus = os.cpus();
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
  console.log(`opencode-governance bench — node ${process.version}, ${os.platform()} ${os.arch()}, ${cpus.length} × ${cpus[0]?.model ?? "cpu"}`);
  console.log(`load average at start (1/5/15 min): ${load()} — other work on the machine shows up in every figure below`);
  await hotPath();
  await realHost();
  console.log(`\nload average at end (1/5/15 min): ${load()}`);
  console.log(`total bench time: ${((performance.now() - started) / 1000).toFixed(1)} s — one run on this machine; repeat before comparing.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
