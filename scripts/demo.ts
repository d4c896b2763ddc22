/**
 * `npm run demo`: what governance does inside a REAL OpenCode (the pinned `opencode` binary) driven by a scripted
 * model, in a throwaway project. Prints a timeline, scene by scene, of what the model was shown and what the plugin
 * recorded, then the session records and the audit counts. Exits 1 if the plugin did not load or a scene did not
 * happen. `--keep` leaves the temp project on disk (its path is printed); `--without-plugin` is the control run
 * (same project, no plugin: the demo must say so and exit 1).
 */
import fs from "node:fs";
import path from "node:path";
import {
  allSessionRecords,
  createTestProject,
  PLUGIN_ENTRY,
  REPO_ROOT,
  startScriptedModel,
  WARM_DEPS,
  type ScriptedModel,
  type TestProject,
} from "../test/harness/index.ts";
import { startOtlpReceiver } from "../test/harness/otlp-receiver.ts";
import { ensureOpencodeBinary, ensureWarmDeps, opencodeVersion } from "../test/harness/warm-cache.ts";
import { MARK, respond } from "./demo/model-script.ts";
import * as Peerless from "./demo/peerless-scenes.ts";
import * as Scenes from "./demo/scenes.ts";
import { sceneTrouble, Stage } from "./demo/stage.ts";
import { bold, dim, red, short, table, Timeline, yellow } from "./demo/timeline.ts";

const keep = process.argv.includes("--keep");
const withoutPlugin = process.argv.includes("--without-plugin");
const t = new Timeline();

let model: ScriptedModel | undefined;
let project: TestProject | undefined;
let stage: Stage | undefined;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;

/** This project lets the built-in `general` agent use `task` in OpenCode; scene 1 makes it a leaf in governance.yaml. */
const GENERAL_AGENT = `---
description: General-purpose agent for research and multi-step tasks.
mode: subagent
permission:
  task:
    "*": allow
---
General-purpose agent. Do the task you are given and report the result.
`;

/** What each scene lacks without the plugin: printed under a scene that failed in the control run. */
const MISSING = {
  load: "nothing writes plugin_started, generates .opencode/governance.yaml or reloads the user's edit of it",
  prefix: "no governance prefix in the model's system prompt, and no session record",
  depth: "no depth of governance's own and no emergency halt: OpenCode's subagent_depth setting alone decides how deep a chain goes",
  leaf: "no leaf gate: an agent governance.yaml makes a leaf delegates as far as OpenCode lets it",
  stop: "the CLI has no plugin to hand guidance or a stop to: the subagent reads on, unguided and unstopped",
  compaction: "no anchors in the summarizer's request, no post-compaction reminder",
  escape: "no record says the running child was interrupted with its parent",
  budget: "no budget: the runaway planner reads on until its own script gives up",
  loop: "no loop guard: the verifier re-reads the same two files until its own script gives up",
  trace: "no turn spans from opencode-governance reach the OTLP receiver",
  resume: "no resume context for a session coming back two hours later",
} as const;
const MISSING_BY_SCENE = Object.values(MISSING);

/** Runs one scene; when it fails, prints what the audit log recorded meanwhile, or in the control run what was missing. */
async function scene(s: Stage, shared: Scenes.Shared, n: number, title: string, missing: string, body: () => Promise<void>): Promise<boolean> {
  const seen = s.audit().length;
  const ok = await t.scene(n, title, body);
  if (ok) return true;
  if (withoutPlugin) {
    t.line(yellow(`without the plugin: ${missing}`));
    return false;
  }
  if (n > 1 && shared.pluginStarted && !shared.editLoaded) {
    t.line(yellow("scene 1's edit of governance.yaml is not in force: general is no leaf, no anchor, no planner budget (see scene 1)"));
  }
  for (const line of sceneTrouble(s.audit().slice(seen))) t.line(line);
  return false;
}

async function main(): Promise<number> {
  console.log(bold(`opencode-governance demo: real OpenCode ${opencodeVersion()} (node_modules/.bin/opencode), a scripted model, a temp project`));
  console.log(dim("times are seconds since the start; ses…xxxxxx is the end of an OpenCode session id"));
  if (!fs.existsSync(PLUGIN_ENTRY)) {
    console.log(red(`${path.relative(REPO_ROOT, PLUGIN_ENTRY)} is missing: run \`npm run demo\` (it builds first) or \`npm run build\`.`));
    return 1;
  }
  if (!fs.existsSync(path.join(WARM_DEPS, "node_modules"))) t.line("first run: caching OpenCode's plugin dependency in .e2e-cache/ (once)");
  ensureOpencodeBinary();
  ensureWarmDeps();
  model = await startScriptedModel(respond);
  project = createTestProject({
    modelUrl: model.url,
    plugin: withoutPlugin ? "none" : "local",
    agents: true,
    extraAgents: { general: GENERAL_AGENT },
    files: {
      "README.md": `# Demo project\n\n${Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of the demo README.`).join("\n")}\n`,
      "docs/notes.md": "# Notes\n\nRelease checklist: README reviewed, tests green.\n",
    },
  });
  stage = new Stage(t, model, project);
  const shipped = fs.readdirSync(path.join(REPO_ROOT, "agents")).filter((f) => f.endsWith(".md")).length;
  t.line(`project ${dim(project.dir)}`);
  t.line(
    `  a git repo with ${withoutPlugin ? yellow("NO plugin (control run)") : "the plugin in .opencode/plugin/governance.js"} and this repo's ${shipped} agents in .opencode/agent/`,
  );

  const s = stage;
  // A local OTLP receiver (127.0.0.1): OpenCode's plugin exports the sessions to it, and scene 10 draws what arrived.
  receiver = await startOtlpReceiver();
  const serveEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_BLRP_SCHEDULE_DELAY: "100" };
  const shared: Scenes.Shared = { withoutPlugin, serveEnv };
  const play = (n: number, title: string, missing: string, body: () => Promise<unknown>) =>
    scene(s, shared, n, title, missing, async () => void (await body()));
  const loaded = await play(1, "The plugin loads; its config is generated", MISSING.load, () => Scenes.pluginLoads(s, shared));
  if (!loaded && !withoutPlugin && shared.pluginStarted === false) {
    console.log(red(bold("\nThe plugin never started in OpenCode (no plugin_started in the audit log), so nothing else can be shown.")));
    return 1;
  }
  await play(2, "A governed session: the prefix reaches every model step", MISSING.prefix, () => Scenes.prefixOnEveryStep(s, shared));
  await play(3, "Delegation to depth 3, then the emergency halt at depth 4", MISSING.depth, () => Scenes.delegationAndHalt(s, shared));
  await play(4, "Leaf agents cannot delegate", MISSING.leaf, () => Scenes.leavesCannotDelegate(s, shared));
  await play(5, "Inject guidance into a running subagent, then stop it (CLI)", MISSING.stop, () => Scenes.injectThenStop(s));
  await play(6, "Compaction keeps the governance context", MISSING.compaction, () => Scenes.compaction(s, shared));
  await play(7, "Escape: aborting a session interrupts its running child too", MISSING.escape, () => Scenes.escape(s, shared));
  const trees: string[] = [];
  const keepTree = async (scene: Promise<string>) => void trees.push(await scene);
  // Both trees start together and run side by side; each scene then shows its own.
  const started = async (title: string, marker: string, child: string) =>
    Peerless.startTree(s, title, marker, child).catch((error: unknown) => ({ parent: "", from: 0, since: 0, done: Promise.resolve({ error }) }));
  const budgetTree = await started("budget demo", MARK.runaway, MARK.runawayChild);
  const loopTree = await started("loop demo", MARK.pingPong, MARK.pingPongChild);
  await play(8, "A runaway subagent meets its budget: notice, the stop ladder, the parent told why", MISSING.budget, () =>
    keepTree(Peerless.budgetRunaway(s, budgetTree)),
  );
  await play(9, "A loop caught by the loop guard (the same two reads, nothing new)", MISSING.loop, () => keepTree(Peerless.loopCaught(s, loopTree)));
  const spans = receiver.spans;
  await play(10, "The session tree as an OpenTelemetry trace, from a local OTLP receiver", MISSING.trace, () => Peerless.traceTree(s, spans, trees));
  await play(11, "Resume two hours later: the resume context", MISSING.resume, () => Scenes.resume(s, shared));

  summary(s);
  const failed = t.results.filter((r) => !r.ok);
  console.log("");
  if (failed.length === 0) console.log(bold(`All ${t.results.length} scenes happened in ${((Date.now() - t.started) / 1000).toFixed(1)} s.`));
  else if (withoutPlugin) {
    console.log(yellow(bold(`Control run, no plugin: ${failed.length} of ${t.results.length} scenes did not happen. What each lacked without governance:`)));
    for (const f of failed) console.log(yellow(`  ✗ ${f.n}. ${f.title}: ${MISSING_BY_SCENE[f.n - 1]}`));
  } else {
    console.log(red(bold(`${failed.length} of ${t.results.length} scenes did not happen:`)));
    for (const f of failed) console.log(red(`  ✗ ${f.n}. ${f.title}: ${f.reason?.split("\n")[0]}`));
  }
  return failed.length === 0 ? 0 : 1;
}

/** The records as the plugin left them, and how many audit events of each type it wrote. */
function summary(s: Stage): void {
  t.heading(12, "Summary: the session records and the audit log");
  const records = allSessionRecords(s.project.governanceDir).sort((a, b) => a.createdAt - b.createdAt);
  const rows = [["session", "agent", "depth", "parent", "state", "control", "tool calls"]];
  for (const r of records) {
    rows.push([
      short(r.sessionId),
      String(r.agent ?? "?"),
      String(r.depth),
      short(r.parentId),
      String(r.state),
      String(r.control),
      String(r.counters?.toolCalls ?? ""),
    ]);
  }
  for (const line of table(rows)) console.log(`  ${line}`);
  const events = s.audit();
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
  console.log("");
  console.log(`  ${bold("audit events by type")} (${events.length} lines in .opencode/governance/audit.log)`);
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (let i = 0; i < sorted.length; i += 3) {
    console.log(
      `  ${sorted
        .slice(i, i + 3)
        .map(([k, v]) => `${String(v).padStart(3)} ${k}`.padEnd(34))
        .join("")}`.trimEnd(),
    );
  }
  for (const e of events.filter((e) => e.type === "hook_error" || e.type === "store_problem").slice(0, 5)) {
    console.log(yellow(`  ${e.type} ${String(e.hook ?? e.kind ?? "")}: ${String(e.message ?? e.reason ?? "").slice(0, 140)}`));
  }
}

async function cleanup(): Promise<void> {
  if (keep && stage?.serve && project) fs.writeFileSync(path.join(project.dir, "..", "opencode-serve.log"), stage.serve.logs());
  await stage?.serve?.stop().catch(() => undefined);
  if (stage) stage.serve = undefined;
  await model?.close().catch(() => undefined);
  model = undefined;
  await receiver?.close().catch(() => undefined);
  receiver = undefined;
  if (project) {
    if (keep) console.log(`\nproject kept at ${project.dir} (state in .opencode/governance/)`);
    else project.cleanup();
    project = undefined;
  }
}

// Ctrl-C: stop the opencode processes (they run in their own process groups) before leaving.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.log(red(`\n${signal}: cleaning up`));
    void cleanup().finally(() => process.exit(130));
  });
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(red(`demo crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  code = 1;
} finally {
  await cleanup();
  console.log(dim(`wall time ${((Date.now() - t.started) / 1000).toFixed(1)} s`));
}
process.exit(code);
