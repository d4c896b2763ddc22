import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import {
  auditEvents,
  createTestProject,
  governanceBytes,
  textOf,
  type ModelRequest,
  type Reply,
  type ScriptedModel,
  type TestProject,
} from "../../test/harness/index.ts";
import { OPENCODE_BIN, PLUGIN_ENTRY, REPO_ROOT } from "../../test/harness/paths.ts";
import { type HostUnderTest, hostUnderTest } from "../../test/harness/host-under-test.ts";
import { EMPTY_HOOKS_PLUGIN_V2, pluginFolder, serveForBench } from "./host-2.ts";
import { findProcessByCwd, memoryMiB, threadCpuMs, treeCpuMs } from "./proc.ts";
import { stats } from "./stats.ts";

export type Variant = "none" | "empty" | "tools" | "tool1" | "loaded" | "governance" | "baseline" | "cold" | "spin" | "wait" | "jitless";
export type Scenario = "A" | "B" | "S";

/**
 * The empty-hooks plugin: the same hooks the governance plugin registers, each doing nothing. What it costs is the
 * host's own price for calling a plugin's hooks, which no plugin can go below.
 */
const EMPTY_HOOKS_PLUGIN = `const noop = async () => {};
export default { id: "empty-hooks", server: async () => ({
  config: noop, event: noop, "experimental.chat.system.transform": noop, "experimental.chat.messages.transform": noop,
  "experimental.session.compacting": noop, "tool.execute.before": noop, "tool.execute.after": noop,
  "experimental.compaction.autocontinue": noop,
}) };
`;

/**
 * `loaded` (only with `--variants`): the empty-hooks plugin that also imports this plugin's bundle and never calls it —
 * what loading the code alone costs the host (parse, compile, module set-up), apart from what the hooks then do.
 */
const loadedOnlyPlugin = () => `import ${JSON.stringify(pathToFileURL(PLUGIN_ENTRY).href)};\n${EMPTY_HOOKS_PLUGIN}`;

/**
 * `baseline` (only with `--variants` and `--baseline <file>`): another build of this plugin — e.g. main's bundle saved
 * before a change — installed the same way, so a lever is measured against what it replaces in the same rounds.
 */
let baselineBundle: string | undefined;
export function setBaselineBundle(file: string): void {
  baselineBundle = path.resolve(file);
}

/**
 * Bun, inside OpenCode, transpiles every JavaScript file it loads and caches the result of files over 50 KB in
 * `$XDG_CACHE_HOME/bun/@t@/` (or `BUN_RUNTIME_TRANSPILER_CACHE_PATH`), which a user's machine keeps between launches:
 * only the first launch after installing or updating the plugin transpiles it. Every run here has a fresh HOME, so
 * the bench gives all runs one shared cache, primed before the first round — what a user pays every day — and the
 * `cold` variant (this plugin with an empty cache each run) shows the one-time first launch.
 */
const TRANSPILER_CACHE = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-bun-cache-"));
process.on("exit", () => rmSync(TRANSPILER_CACHE, { recursive: true, force: true }));

/** Loads the plugin's files once through the host's own Bun (`BUN_BE_BUN=1`), so the shared cache holds them. */
export function primeTranspilerCache(bin: string = OPENCODE_BIN): void {
  const files = [PLUGIN_ENTRY, ...(baselineBundle ? [baselineBundle] : [])];
  const script = files.map((f) => `await import(${JSON.stringify(pathToFileURL(f).href)});`).join("\n");
  const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-prime-"));
  try {
    writeFileSync(path.join(dir, "prime.mjs"), script);
    execFileSync(bin, [path.join(dir, "prime.mjs")], {
      env: { ...process.env, BUN_BE_BUN: "1", BUN_RUNTIME_TRANSPILER_CACHE_PATH: TRANSPILER_CACHE },
      stdio: "pipe",
      timeout: 30_000,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The shared, primed cache; for `cold`, a new empty one inside the run's own temp folder. */
export function transpilerCacheEnv(variant: Variant, project: TestProject): NodeJS.ProcessEnv {
  return { BUN_RUNTIME_TRANSPILER_CACHE_PATH: variant === "cold" ? path.join(project.dir, "..", "bun-cache-cold") : TRANSPILER_CACHE };
}

/**
 * `tools` (only with `--variants`): the empty-hooks plugin that also offers three no-op tools with the governance tools'
 * names and argument shapes (built with this repository's zod) — what the host charges for a plugin's tools alone;
 * `tool1`: the same arguments as one tool.
 */
const toolsPlugin = (one: boolean) => `import * as z from ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "node_modules", "zod", "index.js")).href)};
const run = async () => "ok";
const tool = (description, args) => ({ description, args, execute: run });
const tools = {
  governance_sessions: tool("List governed sessions as a tree.", { all: z.boolean().optional().describe("include finished") }),
  governance_stop: tool("Stop a running subagent: L1 graceful, L2 immediate, L3 terminated.", {
    target: z.string().describe("session id or agent name"), level: z.number().int().min(1).max(3).optional(), reason: z.string().max(500).optional() }),
  governance_inject: tool("Send guidance to a running subagent.", { target: z.string().describe("session id or agent name"), text: z.string().describe("max 500 chars") }),
};
const one = { governance: tool("Governed sessions: list, stop or steer a running subagent.", {
  action: z.enum(["sessions", "stop", "inject"]), target: z.string().optional().describe("session id or agent name"),
  level: z.number().int().min(1).max(3).optional(), reason: z.string().max(500).optional(), text: z.string().optional(), all: z.boolean().optional() }) };
${EMPTY_HOOKS_PLUGIN.replace("server: async () => ({", `server: async () => ({ tool: ${one ? "one" : "tools"},`)}`;

/**
 * Calibration (only with `--variants`): the empty-hooks plugin whose `tool.execute.before` costs a KNOWN amount —
 * `spin`: 3 ms of CPU on the main thread per tool call (300 ms in scenario A), `wait`: 10 ms of waiting per tool call,
 * no CPU. Measured beside `empty` in the same session they show what a measurement can resolve, and what the host
 * charges for CPU and for waiting on its critical path (docs/performance.md, "Third look").
 */
const calibrationPlugin = (kind: "spin" | "wait") =>
  EMPTY_HOOKS_PLUGIN.replace(
    '"tool.execute.before": noop',
    kind === "spin"
      ? '"tool.execute.before": async () => { const end = performance.now() + 3; while (performance.now() < end); }'
      : '"tool.execute.before": () => new Promise((resolve) => setTimeout(resolve, 10))',
  );

/**
 * `jitless` (only with `--variants`): the empty-hooks plugin that switches zod's JIT off the way zod's `config()` does —
 * on the one configuration object every zod 4 copy in the process shares (`globalThis.__zod_globalConfig`), the
 * host's included. What a plugin that does so costs the host (docs/performance.md, "Fourth look").
 */
const jitlessPlugin = () => `(globalThis.__zod_globalConfig ??= {}).jitless = true;\n${EMPTY_HOOKS_PLUGIN}`;

/** The variants that install a plugin of the bench's own instead of this one: its text. */
const TEST_PLUGINS: Partial<Record<Variant, () => string>> = {
  empty: () => EMPTY_HOOKS_PLUGIN,
  loaded: loadedOnlyPlugin,
  tools: () => toolsPlugin(false),
  tool1: () => toolsPlugin(true),
  spin: () => calibrationPlugin("spin"),
  wait: () => calibrationPlugin("wait"),
  jitless: jitlessPlugin,
};

const firstUser = (req: ModelRequest) => textOf(req.messages.find((m) => m.role === "user")?.content);
const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").length;

/**
 * A hundred small files, each read once: every tool call of a scenario is a DISTINCT call, as a working agent's are.
 * Reading one file with an unchanged result again and again is what the loop guard (on by default, docs/budgets.md)
 * stops after a few calls — no working agent does it, so neither does the bench (issue 31).
 */
export const BENCH_FILE_COUNT = 100;
export const BENCH_FILES: Record<string, string> = Object.fromEntries(
  Array.from({ length: BENCH_FILE_COUNT }, (_, i) => [`notes/${i}.md`, `# note ${i}\n\nA small file.\n`]),
);

/**
 * The `n`th read of a scenario: a different file each time (the hundred files in turn beyond that). OpenCode 2's `read`
 * takes `path` (OpenCode 1's `filePath`); a request offering `shell` is OpenCode 2's.
 */
export const benchRead = (n: number, v2 = false) => ({ name: "read", args: { [v2 ? "path" : "filePath"]: `notes/${n % BENCH_FILE_COUNT}.md` } });

/** The `n`th shell command of scenario S: `cat` of a different file each time (OpenCode 1's `bash`, OpenCode 2's `shell`). */
export const benchShell = (n: number, v2 = false) => {
  const command = `cat notes/${n % BENCH_FILE_COUNT}.md`;
  return { name: v2 ? "shell" : "bash", args: { command, description: command } };
};

/**
 * The scripted model for both scenarios, driven only by the request (stateless): scenario A reads `n` different
 * files (n + 1 model requests); scenario B's root hands one task to `general`, whose session reads `n` different files.
 */
export function benchRespond(req: ModelRequest): Reply {
  const first = firstUser(req);
  const v2 = req.tools.includes("shell");
  const done = toolResults(req);
  const a = /BENCH-A (\d+)/.exec(first);
  if (a) return done >= Number(a[1]) ? { text: "done" } : { toolCalls: [benchRead(done, v2)] };
  const s = /BENCH-S (\d+)/.exec(first);
  if (s) return done >= Number(s[1]) ? { text: "done" } : { toolCalls: [benchShell(done, v2)] };
  const child = /BENCH-B-CHILD (\d+)/.exec(first);
  if (child) return done < Number(child[1]) ? { toolCalls: [benchRead(done, v2)] } : { text: "child done" };
  const root = /BENCH-B-ROOT (\d+)/.exec(first);
  if (root && done === 0) {
    const prompt = `BENCH-B-CHILD ${root[1]}`;
    const description = "read the notes";
    return {
      toolCalls: [
        v2 ? { name: "subagent", args: { agent: "general", description, prompt } } : { name: "task", args: { subagent_type: "general", description, prompt } },
      ],
    };
  }
  return { text: "ok" };
}

/** Bytes of governance text in one request (test/harness/governance-text.ts: prefix, note, tool schema, task blocks). */
export { governanceBytes };

export type HostRun = {
  variant: Variant;
  scenario: Scenario;
  /** spawn of `opencode serve` → first session created (the plugin loads on the project's first request). */
  startupMs: number;
  /** prompt sent → turn finished. */
  runMs: number;
  cpuMs: number;
  /** CPU by thread name of the opencode process (`proc.ts` `threadCpuMs`), read with `cpuMs`. */
  threads: Map<string, number>;
  peakRssMiB: number;
  steadyRssMiB: number;
  requests: ModelRequest[];
  /**
   * Where the run's wall time went outside the model: prompt sent → first model request; the sum of the gaps between
   * one model response's end and the next request (tool calls, hooks, the child's start); last response → prompt
   * answered. The scripted model answers at once, so everything else is host and plugin.
   */
  gaps: { firstMs: number; betweenMs: number; lastMs: number; stepMedianMs: number };
  clean: boolean;
  problem: string;
};

/** A fresh project for one run of `variant`: the bench files to read, and the variant's plugin installed. */
export function benchProject(model: ScriptedModel, variant: Variant, host: HostUnderTest = hostUnderTest()): TestProject {
  if (host.line === 2 && !["none", "empty", "governance", "cold"].includes(variant)) throw new Error(`variant ${variant} is OpenCode 1's only`);
  const project = createTestProject({
    host,
    modelUrl: model.url,
    plugin: variant === "governance" || variant === "cold" ? "local" : "none",
    files: BENCH_FILES,
    // A baseline build may be an experiment with hooks turned off, which governance rightly reports as a gap.
    allowGovernanceGaps: variant === "baseline",
  });
  const plugins = path.join(project.dir, ".opencode", pluginFolder(host));
  const text = host.line === 2 && variant === "empty" ? EMPTY_HOOKS_PLUGIN_V2 : TEST_PLUGINS[variant]?.();
  if (text !== undefined) {
    mkdirSync(plugins, { recursive: true });
    writeFileSync(path.join(plugins, "empty-hooks.js"), text);
  }
  if (variant === "baseline") {
    if (!baselineBundle) throw new Error("the baseline variant needs --baseline <bundle file>");
    mkdirSync(plugins, { recursive: true });
    writeFileSync(path.join(plugins, "governance.js"), `export { default } from ${JSON.stringify(pathToFileURL(baselineBundle).href)};\n`);
  }
  return project;
}

/** The prompt that plays `scenario` with `calls` reads (see benchRespond). */
export const scenarioPrompt = (scenario: Scenario, calls: number) => (scenario === "B" ? `BENCH-B-ROOT ${calls}` : `BENCH-${scenario} ${calls}`);

export async function hostRun(
  model: ScriptedModel,
  variant: Variant,
  scenario: Scenario,
  calls: number,
  host: HostUnderTest = hostUnderTest(),
): Promise<HostRun> {
  const project = benchProject(model, variant, host);
  try {
    const spawned = Date.now();
    const serve = await serveForBench(project, transpilerCacheEnv(variant, project));
    try {
      const pid = findProcessByCwd(project.dir);
      const session = await serve.createSession();
      const startupMs = Date.now() - spawned;
      const from = model.requests.length;
      const started = Date.now();
      await serve.prompt(session.id, scenarioPrompt(scenario, calls));
      const runMs = Date.now() - started;
      const cpuMs = pid === undefined ? Number.NaN : treeCpuMs(pid);
      const threads = pid === undefined ? new Map<string, number>() : threadCpuMs(pid);
      const peak = pid === undefined ? Number.NaN : memoryMiB(pid).hwm;
      await new Promise((r) => setTimeout(r, 500));
      const steady = pid === undefined ? Number.NaN : memoryMiB(pid).rss;
      const requests = model.requests.slice(from).filter((r) => r.kind === "agent");
      const ended = started + runMs;
      // One gap per step: a model response's end → the next request (the tool call, every hook, the host's own work).
      const steps = requests.slice(1).map((r, i) => Math.max(0, r.receivedAt - (requests[i]!.closedAt ?? r.receivedAt)));
      const gaps = {
        firstMs: (requests[0]?.receivedAt ?? ended) - started,
        betweenMs: steps.reduce((n, g) => n + g, 0),
        lastMs: ended - (requests.at(-1)?.closedAt ?? ended),
        stepMedianMs: stats(steps).median,
      };
      const reads = requests.reduce((n, r) => Math.max(n, r.messages.filter((m) => m.role === "tool").length), 0);
      const loaded = auditEvents(project.governanceDir).some((e) => e.type === "plugin_started");
      const problems: string[] = [];
      if (pid === undefined) problems.push("opencode pid not found");
      if (scenario !== "B" && reads !== calls) problems.push(`${reads} tool results, expected ${calls}`);
      if (scenario === "B" && !requests.some((r) => r.messages.filter((m) => m.role === "tool").length === calls))
        problems.push(`child did not make ${calls} reads`);
      if (loaded !== (variant === "governance" || variant === "baseline" || variant === "cold")) problems.push(`plugin_started ${loaded}`);
      return {
        variant,
        scenario,
        startupMs,
        runMs,
        cpuMs,
        threads,
        peakRssMiB: peak,
        steadyRssMiB: steady,
        requests,
        gaps,
        clean: problems.length === 0,
        problem: problems.join("; "),
      };
    } finally {
      await serve.stop();
    }
  } finally {
    project.cleanup();
  }
}
