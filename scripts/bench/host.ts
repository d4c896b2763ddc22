import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { GOVERNANCE_PREFIX_HEADING } from "../../governance/texts/governance-prefix.ts";
import { auditEvents, createTestProject, serveOpencode, textOf, type ModelRequest, type Reply, type ScriptedModel } from "../../test/harness/index.ts";
import { PLUGIN_ENTRY } from "../../test/harness/paths.ts";
import { findProcessByCwd, memoryMiB, treeCpuMs } from "./proc.ts";

export type Variant = "none" | "empty" | "loaded" | "governance";
export type Scenario = "A" | "B";

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

const firstUser = (req: ModelRequest) => textOf(req.messages.find((m) => m.role === "user")?.content);
const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").length;

/**
 * The scripted model for both scenarios, driven only by the request (stateless): scenario A reads README.md `n`
 * times; scenario B's root hands one task to `general`, whose session reads `n` times.
 */
export function benchRespond(req: ModelRequest): Reply {
  const first = firstUser(req);
  const a = /BENCH-A (\d+)/.exec(first);
  if (a) return toolResults(req) < Number(a[1]) ? { toolCalls: [{ name: "read", args: { filePath: "README.md" } }] } : { text: "done" };
  const child = /BENCH-B-CHILD (\d+)/.exec(first);
  if (child) return toolResults(req) < Number(child[1]) ? { toolCalls: [{ name: "read", args: { filePath: "README.md" } }] } : { text: "child done" };
  const root = /BENCH-B-ROOT (\d+)/.exec(first);
  if (root && toolResults(req) === 0) {
    return { toolCalls: [{ name: "task", args: { subagent_type: "general", description: "read the readme", prompt: `BENCH-B-CHILD ${root[1]}` } }] };
  }
  return { text: "ok" };
}

/** Bytes of governance text in one request: the prefix, the governance tools' schemas, and task context blocks. */
export function governanceBytes(req: ModelRequest): { prefix: number; tools: number; block: number; total: number } {
  const at = req.system.indexOf(GOVERNANCE_PREFIX_HEADING);
  const prefix = at < 0 ? 0 : Buffer.byteLength(req.system.slice(at).split("\n\n")[0]!);
  const tools = ((req.body.tools as { function: { name: string } }[] | undefined) ?? [])
    .filter((t) => t.function.name.startsWith("governance_"))
    .reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t)), 0);
  let block = 0;
  for (const m of req.messages)
    for (const b of textOf(m.content).match(/<governance-context>[\s\S]*?<\/governance-context>/g) ?? []) block += Buffer.byteLength(b);
  return { prefix, tools, block, total: prefix + tools + block };
}

export type HostRun = {
  variant: Variant;
  scenario: Scenario;
  /** spawn of `opencode serve` → first session created (the plugin loads on the project's first request). */
  startupMs: number;
  /** prompt sent → turn finished. */
  runMs: number;
  cpuMs: number;
  peakRssMiB: number;
  steadyRssMiB: number;
  requests: ModelRequest[];
  clean: boolean;
  problem: string;
};

export async function hostRun(model: ScriptedModel, variant: Variant, scenario: Scenario, calls: number): Promise<HostRun> {
  const project = createTestProject({
    modelUrl: model.url,
    plugin: variant === "governance" ? "local" : "none",
    files: { "README.md": "# bench\n\nA small file.\n" },
  });
  if (variant === "empty" || variant === "loaded") {
    mkdirSync(path.join(project.dir, ".opencode", "plugin"), { recursive: true });
    writeFileSync(path.join(project.dir, ".opencode", "plugin", "empty-hooks.js"), variant === "empty" ? EMPTY_HOOKS_PLUGIN : loadedOnlyPlugin());
  }
  try {
    const spawned = Date.now();
    const serve = await serveOpencode(project);
    try {
      const pid = findProcessByCwd(project.dir);
      const session = await serve.http.createSession();
      const startupMs = Date.now() - spawned;
      const from = model.requests.length;
      const started = Date.now();
      await serve.http.prompt(session.id, scenario === "A" ? `BENCH-A ${calls}` : `BENCH-B-ROOT ${calls}`);
      const runMs = Date.now() - started;
      const cpuMs = pid === undefined ? Number.NaN : treeCpuMs(pid);
      const peak = pid === undefined ? Number.NaN : memoryMiB(pid).hwm;
      await new Promise((r) => setTimeout(r, 500));
      const steady = pid === undefined ? Number.NaN : memoryMiB(pid).rss;
      const requests = model.requests.slice(from).filter((r) => r.kind === "agent");
      const reads = requests.reduce((n, r) => Math.max(n, r.messages.filter((m) => m.role === "tool").length), 0);
      const loaded = auditEvents(project.governanceDir).some((e) => e.type === "plugin_started");
      const problems: string[] = [];
      if (pid === undefined) problems.push("opencode pid not found");
      if (scenario === "A" && reads !== calls) problems.push(`${reads} tool results, expected ${calls}`);
      if (scenario === "B" && !requests.some((r) => r.messages.filter((m) => m.role === "tool").length === calls))
        problems.push(`child did not make ${calls} reads`);
      if (loaded !== (variant === "governance")) problems.push(`plugin_started ${loaded}`);
      return {
        variant,
        scenario,
        startupMs,
        runMs,
        cpuMs,
        peakRssMiB: peak,
        steadyRssMiB: steady,
        requests,
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
