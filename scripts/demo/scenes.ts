import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { allText, patchSessionRecord, runOpencode, serveOpencode, statusNote, waitFor } from "../../test/harness/index.ts";
import { SUBAGENT_STOPPED_HEADING } from "../../governance/texts/stop-directives.ts";
import { MARK, toolResults, turnPrompt } from "./model-script.ts";
import { ANCHOR, editGeneratedConfig, RUNAWAY_BUDGET } from "./config-edit.ts";
import { parentNote } from "./peerless-scenes.ts";
import { auditLine, COORDINATOR, type Stage } from "./stage.ts";
import { dim, expect, short, yellow } from "./timeline.ts";

/**
 * The demo's scenes, in order. Each prints what happened as it happens and throws, with what did not happen, when
 * governance did not do its part. Later scenes reuse sessions made by earlier ones through `Shared`.
 */

export const PREFIX = "## Governance Context (opencode-governance)";
export const REMINDER = "## Post-Compaction Context Recovery (opencode-governance)";
export const RESUME = "## Resumed Session (opencode-governance)";
const HOUR = 3_600_000;
const STOP_HEADINGS = ["⚠️ SESSION STOP REQUESTED", "🛑 SESSION STOP — IMMEDIATE", "❌ SESSION TERMINATED"] as const;
/** The parent's note starts with the heading and the parent's seal (`⚠️ SUBAGENT STOPPED [seal:…]: agent …`). */
const NOTE = SUBAGENT_STOPPED_HEADING;

/** `serveEnv`: the environment `opencode serve` gets (the demo's OTLP receiver). */
export type Shared = {
  withoutPlugin: boolean;
  /** Scene 1's finding: false when no plugin_started was ever written. */
  pluginStarted?: boolean;
  /** Scene 1's edit is in force (general a leaf, the anchor, the planner's budget: scenes 4, 6 and 8 rely on it). */
  editLoaded?: boolean;
  serveEnv?: NodeJS.ProcessEnv;
  main?: string;
  escaped?: string;
  escapedChild?: string;
};

export async function pluginLoads(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  s.serve = await serveOpencode(s.project, { env: shared.serveEnv });
  t.line(`opencode serve listening on ${s.serve.url}`);
  await s.http.status(); // the first request for the project makes OpenCode create its instance, loading plugins
  const started = await waitFor(() => s.auditOf("plugin_started")[0], "plugin_started", shared.withoutPlugin ? 5_000 : 15_000).catch(() => undefined);
  if (!started) {
    shared.pluginStarted = false;
    throw new Error(
      shared.withoutPlugin
        ? "no plugin_started in .opencode/governance/audit.log: no plugin, so nothing generates governance.yaml or watches it"
        : "the plugin never started: no plugin_started in .opencode/governance/audit.log (OpenCode loads a broken plugin silently; `opencode serve --print-logs` shows why)",
    );
  }
  shared.pluginStarted = true;
  t.line(auditLine(started));
  for (const e of s.auditOf("host_limit_raised")) t.line(`${auditLine(e)}  ${dim("(else OpenCode refuses every subagent's own task call)")}`);

  const configFile = path.join(s.project.dir, ".opencode", "governance.yaml");
  expect(fs.existsSync(configFile), "the plugin started but .opencode/governance.yaml was not generated");
  const yaml = fs.readFileSync(configFile, "utf8");
  const config = YAML.parse(yaml) as {
    enforcement: string;
    delegation: { maxDepth: number };
    agents: Record<string, { role: string }>;
    resume: { minIdle: string; maxIdle: string };
    stop: { deadline: string };
  };
  const byRole = (role: string) =>
    Object.entries(config.agents ?? {})
      .filter(([, a]) => a?.role === role)
      .map(([n]) => n)
      .join(", ");
  t.line(`config .opencode/governance.yaml generated: ${yaml.split("\n").length} lines, every field commented. In short:`);
  t.quote(
    [
      `enforcement: ${config.enforcement}, maxDepth: ${config.delegation?.maxDepth}, resume window ${config.resume?.minIdle}–${config.resume?.maxIdle}, stop deadline ${config.stop?.deadline}`,
      `primary: ${byRole("primary")}`,
      `delegating: ${byRole("delegating")}`,
      `leaf: ${byRole("leaf")}`,
    ].join("\n"),
  );
  expect(fs.existsSync(path.join(s.project.governanceDir, ".gitignore")), "the state folder .opencode/governance/ has no .gitignore");
  t.line("state folder .opencode/governance/ created, git-ignored by its own .gitignore");

  // A user hand-edits the generated file while OpenCode runs; the plugin notices and reloads it.
  const since = Date.now();
  fs.writeFileSync(configFile, editGeneratedConfig(yaml));
  t.line(
    `user edits it: phase release-review, anchor ${ANCHOR} (critical), the built-in "general" agent a leaf, governance-planner a budget of ${RUNAWAY_BUDGET} tool calls`,
  );
  t.line("the running plugin notices the edit (it checks the file every 2 s) and reloads it, no restart");
  // Whichever comes first: the reload, or the plugin's word on what is wrong with the edited file.
  const outcome = await waitFor(
    () => s.auditOf("config_problem", { since })[0] ?? s.auditOf("config_loaded", { since })[0],
    "the edited config reloaded (config_loaded) or rejected (config_problem)",
    8_000,
  ).catch(() => undefined);
  expect(outcome, "the plugin started, but wrote neither config_loaded nor config_problem within 8 s of the edit: it did not notice the edited file");
  const problems = s.auditOf("config_problem", { since });
  expect(
    problems.length === 0,
    `the plugin started, but the edited config was not loaded: ${problems
      .map((p) => `config_problem ${path.relative(s.project.dir, String(p.file))}:${p.line ?? "?"}:${p.column ?? "?"} ${p.message}`)
      .join("; ")}`,
  );
  t.line(auditLine(outcome));
  shared.editLoaded = true;
}

export async function prefixOnEveryStep(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const id = (shared.main = (await s.http.createSession({ title: "demo" })).id);
  t.line(`session ${short(id)}, prompt as ${COORDINATOR}: "Look around" (the model reads README.md, then docs/notes.md, then answers)`);
  const from = s.mark();
  await s.prompt(id, `${MARK.prefix} Look around the project.`);
  const steps = s.stepsOf(id, from);
  expect(steps.length > 0, "no model request reached the scripted model");
  const system = steps[0]!.system;
  expect(system.includes(PREFIX), `the first model step's system prompt has no "${PREFIX}"`);
  const prefix = system.slice(system.indexOf(PREFIX));
  t.line(`step 1: the system prompt ends with the governance prefix (${prefix.length} chars):`);
  t.quote(prefix, 7);
  const carried = steps.filter((r) => r.system.includes(PREFIX)).length;
  const afterTools = steps.filter((r) => toolResults(r).length > 0).length;
  t.line(`${carried} of ${steps.length} model steps carried it (${afterTools} of them after tool results)`);
  expect(carried === steps.length, `only ${carried} of ${steps.length} model steps carried the prefix`);
  const r = await s.recordWhere(id, "the record between turns", (r) => r.state === "between_turn");
  t.line(
    `record ${short(id)}: ${r.agent}, depth ${r.depth}, state ${r.state}, ${r.counters.toolCalls} tool calls, last ${r.lastToolCall?.tool} ${r.lastToolCall?.summary ?? ""}`,
  );
  t.line(dim("  (session.idle ended the turn: between turns, not interrupted)"));
  expect(r.agent === COORDINATOR, `the record's agent is ${r.agent}, not ${COORDINATOR}`);
}

export async function delegationAndHalt(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const main = shared.main;
  expect(main, "no governed session from scene 2");
  const from = s.mark();
  t.line(`prompt ${short(main)}: "Review the README"; the scripted agents delegate coordinator → high → executor → verifier → validator`);
  await s.tail(["child_linked", "emergency_halt"], () => s.prompt(main, `${MARK.chain} Review the README.`));
  const [high, exec, verify] = [MARK.chainHigh, MARK.chainExec, MARK.chainVerify].map((m) => s.requestWith(m, from)?.sessionId);
  expect(high && exec && verify, `the chain stopped early: high=${short(high)} executor=${short(exec)} verifier=${short(verify)}`);
  const childPrompt = turnPrompt(s.stepsOf(high, from)[0]!);
  t.line(`${short(high)}'s task prompt begins with the block the plugin put in front of it:`);
  t.quote(childPrompt.slice(0, childPrompt.indexOf("</governance-context>") + "</governance-context>".length), 3);
  let parent = main;
  for (const [i, id] of [high, exec, verify].entries()) {
    const r = await s.recordWhere(id, `the record of ${short(id)}`, () => true);
    t.line(`record ${short(id)}: ${r.agent}, depth ${r.depth}, level ${r.level}, parent ${short(r.parentId)}, control ${r.control}`);
    expect(
      r.depth === i + 1 && r.parentId === parent,
      `${short(id)} has depth ${r.depth} under ${short(r.parentId)}; expected depth ${i + 1} under ${short(parent)}`,
    );
    parent = id;
  }
  const validator = s.requestWith(MARK.chainValidate, from);
  expect(!validator, `a depth-4 session ${short(validator?.sessionId)} was spawned: the halt did not block it`);
  const halted = s
    .stepsOf(verify, from)
    .flatMap(toolResults)
    .find((x) => x.includes("EMERGENCY_HALT"));
  expect(halted, "the verifier's task call to governance-validator did not come back with an EMERGENCY_HALT result");
  t.line("the verifier (depth 3) called task → governance-validator (depth 4); the model received as the tool result:");
  t.quote(halted, 6);
  expect(s.auditOf("emergency_halt", { sessionId: verify }).length > 0, "no emergency_halt in the audit log");
  const vr = s.record(verify);
  if (vr?.halt) t.line(`record ${short(verify)}: halt ${vr.halt.reason} (${vr.halt.detail}), violations ${vr.counters.violations}`);
}

export async function leavesCannotDelegate(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const main = shared.main;
  expect(main, "no governed session from scene 2");
  const from = s.mark();
  t.line(`prompt ${short(main)}: "Make a small change"; the coordinator delegates twice in one step:`);
  t.line("  coordinator → executor → governance-builder (leaf) → task,  and  coordinator → general → task");
  t.line(dim("  (.opencode/agent/general.md lets general use task in OpenCode; governance.yaml makes it a leaf)"));
  await s.tail(["child_linked", "delegation_blocked"], () => s.prompt(main, `${MARK.leaf} Make a small change.`));
  const grandchild = s.requestWith(MARK.chainValidate, from);
  expect(!grandchild, `a leaf spawned a session (${short(grandchild?.sessionId)})`);

  const builder = s.requestWith(MARK.leafBuilder, from);
  expect(builder?.sessionId, "the builder was never spawned");
  const builderResult = s.stepsOf(builder.sessionId, from).flatMap(toolResults).at(-1);
  expect(builderResult, "the builder's task call produced no tool result");
  t.line(`builder ${short(builder.sessionId)} (depth ${s.record(builder.sessionId)?.depth}) called task; the model received:`);
  t.quote(builderResult, 2);
  if (s.auditOf("delegation_blocked", { sessionId: builder.sessionId }).length === 0 && !builder.tools.includes("task")) {
    t.line(yellow("  blocked by OpenCode, not by the plugin: the builder's agent file denies task, so OpenCode never offered the"));
    t.line(yellow("  tool; the plugin's leaf gate never saw the call and nothing was audited"));
  }

  const general = s.requestWith(MARK.leafGeneral, from);
  expect(general?.sessionId, "the general agent was never spawned");
  const generalResult = s.stepsOf(general.sessionId, from).flatMap(toolResults).at(-1);
  expect(generalResult, `general ${short(general.sessionId)} made no task call that returned (task offered by OpenCode: ${general.tools.includes("task")})`);
  t.line(`general ${short(general.sessionId)} (depth ${s.record(general.sessionId)?.depth}) called task → explore; the model received:`);
  t.quote(generalResult, 3);
  expect(generalResult.includes("LEAF_AGENT"), "the general agent's task call was not refused by governance (no LEAF_AGENT in the tool result)");
  expect(s.auditOf("delegation_blocked", { sessionId: general.sessionId }).length > 0, "no delegation_blocked in the audit log");
}

export async function injectThenStop(s: Stage): Promise<void> {
  const { t } = s;
  const parent = (await s.http.createSession({ title: "stop demo" })).id;
  const from = s.mark();
  const since = Date.now();
  t.line(`session ${short(parent)} as ${COORDINATOR} delegates a long check to governance-executor, which reads README.md in a loop`);
  await s.tail(
    [
      "child_linked",
      "inject_queued",
      "session_injected",
      "stop_queued",
      "session_stop_requested",
      "stop_escalated",
      "stop_level_delivered",
      "session_stopped",
      "session_hard_stopped",
      "tool_blocked",
      "parent_notified",
      "inject_dropped",
    ],
    async () => {
      await s.http.promptAsync(parent, `${MARK.stop} Run the long check.`, { agent: COORDINATOR });
      const child = await s.sessionWith(MARK.loop, from);
      await waitFor(() => s.stepsOf(child, from).some((r) => toolResults(r).length >= 1), "the child's first tool result");
      t.line(`child ${short(child)} is looping`);

      const guidance = "Also note the README's line count in your final answer.";
      const inj = await s.cli("inject", child, guidance);
      t.line(`$ opencode-governance inject ${short(child)} "${guidance}"`);
      t.quote(inj.out, 2);
      expect(inj.code === 0, `inject failed: ${inj.out}`);
      const guided = await waitFor(
        () =>
          s
            .stepsOf(child, from)
            .map((r) => toolResults(r).at(-1))
            .find((x) => x?.includes("USER GUIDANCE")),
        "the guidance in a child tool result",
        8_000,
      );
      t.line("the child's next tool result began with it, fenced as data:");
      t.quote(guided, 7);

      const stop = await s.cli("stop", child, "--reason", "wrong approach, stop now");
      t.line(`$ opencode-governance stop ${short(child)} --reason "wrong approach, stop now"`);
      t.quote(stop.out, 2);
      expect(stop.code === 0, `stop failed: ${stop.out}`);
      t.line(dim("(the scripted child ignores the directives on purpose and keeps calling tools)"));
      // OpenCode's stored tool results (the transcript the user sees), then whether a model request carried each.
      const found = new Map<number, string>();
      await waitFor(
        async () => {
          const outputs = await s.toolOutputs(child);
          STOP_HEADINGS.forEach((h, i) => {
            const hit = outputs.find((o) => o.includes(h));
            if (hit && !found.has(i)) found.set(i, hit);
          });
          return found.size === STOP_HEADINGS.length;
        },
        "L1, L2 and L3 in the child's tool results",
        10_000,
      ).catch(() => undefined);
      await s.http.waitIdle([child], 8_000).catch(() => undefined);
      for (const [i, text] of [...found.entries()].sort((a, b) => a[0] - b[0])) {
        const toModel = s.stepsOf(child, from).some((r) => toolResults(r).some((x) => x.includes(STOP_HEADINGS[i]!)));
        t.line(
          `L${i + 1}, on the child's next tool result${toModel ? "" : yellow(" (in the transcript; the session was aborted before the model was called again)")}:`,
        );
        t.quote(text, i === 0 ? 5 : 3);
      }
      expect(
        found.size === 3,
        `the child's tool results showed ${found.size ? [...found.keys()].map((i) => `L${i + 1}`).join(", ") : "no stop directive"}; expected L1, L2 and L3`,
      );
      const stopped = await s.recordWhere(child, "the child recorded stopped", (r) => r.control === "stopped").catch(() => s.record(child));
      t.line(`record ${short(child)}: control ${stopped?.control}, levels delivered ${JSON.stringify(stopped?.stop?.delivered ?? [])}`);
      expect(stopped?.control === "stopped", `the child's record says control ${stopped?.control}, not stopped`);
      await s.http.waitIdle([parent, child], 10_000);
    },
  );
  const note = parentNote(s, parent, from);
  expect(note, `the parent's next model request did not contain "${NOTE}"`);
  t.line("the parent's next model request told it, in front of its task result:");
  t.quote(note, 4);
  expect(s.auditOf("parent_notified", { since, sessionId: parent }).length > 0, "no parent_notified in the audit log");
}

export async function compaction(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const main = shared.main;
  expect(main, "no governed session from scene 2");
  const from = s.mark();
  t.line(`summarize ${short(main)} (what /compact does)`);
  const r = await s.tail(["compaction_context_added", "session_compacted"], async () => {
    await s.http.summarize(main);
    await s.http.waitIdle([main]);
    return s.recordWhere(main, "the record compacted", (r) => r.state === "compacted");
  });
  const request = s.model.requests.slice(from).find((r) => r.kind === "compaction");
  expect(request, "no compaction request reached the model");
  const text = allText(request);
  expect(text.includes(ANCHOR), `the compaction request did not carry the anchor ${ANCHOR}`);
  t.line("the summarizer's request carried the anchors, language, last actions and hierarchy, e.g.:");
  t.quote(text.slice(text.lastIndexOf("\n", text.indexOf(ANCHOR)) + 1).split("\n")[0]!, 1);
  t.line(`record ${short(main)}: state ${r.state}, compactions ${r.compactionHistory.length}, reminder pending ${r.compactedPending}`);
  const next = s.mark();
  await s.prompt(main, `${MARK.afterCompact} What next?`);
  const step = s.stepsOf(main, next)[0];
  expect(step, "no model step after the compaction");
  const all = allText(step);
  expect(all.includes(REMINDER), "the next model step had no post-compaction reminder");
  t.line(`the next model step carried the post-compaction reminder${step.system.includes(PREFIX) ? " (and the prefix)" : yellow(" (but NOT the prefix)")}:`);
  t.quote(all.slice(all.indexOf(REMINDER)), 10);
}

export async function escape(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const parent = (shared.escaped = (await s.http.createSession({ title: "escape demo" })).id);
  const from = s.mark();
  const since = Date.now();
  t.line(`session ${short(parent)} as ${COORDINATOR} delegates to governance-planner, which reads README.md and then streams forever`);
  await s.tail(["child_linked", "session_aborted", "descendants_interrupted", "descendant_aborted", "child_closed"], async () => {
    await s.http.promptAsync(parent, `${MARK.escape} Plan the release.`, { agent: COORDINATOR });
    const child = (shared.escapedChild = await s.sessionWith(MARK.escapeChild, from));
    await waitFor(() => s.stepsOf(child, from).some((r) => toolResults(r).length > 0) && s.model.openStreams() > 0, "the child streaming");
    t.line(`child ${short(child)} is busy; the user presses Escape → abort ${short(parent)}`);
    await s.http.abort(parent);
    await waitFor(() => new Set(s.auditOf("session_aborted", { since }).map((e) => e.sessionId)).size >= 2, "session_aborted for both", 5_000).catch(
      () => undefined,
    );
  });
  const child = shared.escapedChild!;
  const p = await s.recordWhere(parent, "the parent recorded interrupted", (r) => r.state === "interrupted").catch(() => s.record(parent));
  const c = await s.recordWhere(child, "the child recorded interrupted", (r) => r.state === "interrupted").catch(() => s.record(child));
  t.line(
    `record ${short(parent)}: ${p?.state}; record ${short(child)}: ${c?.state}, last tool call ${c?.lastToolCall?.tool ?? "-"} ${c?.lastToolCall?.summary ?? ""}`,
  );
  expect(p, "the aborted session has no governance record");
  expect(p.state === "interrupted", `the aborted session is recorded ${p.state}, not interrupted`);
  expect(c?.state === "interrupted", `its running child is recorded ${c ? c.state : "nowhere (no governance record)"}, not interrupted`);
  await s.http.waitIdle([parent, child], 5_000);
  t.line(`OpenCode reports both idle; model streams still open: ${s.model.openStreams()}`);
}

export async function resume(s: Stage, shared: Shared): Promise<void> {
  const { t } = s;
  const id = shared.escaped;
  expect(id && s.record(id), "no interrupted session from scene 7");
  await s.serve?.stop();
  s.serve = undefined;
  t.line(`opencode serve stopped; the records of ${short(id)} and its child are moved 2 h into the past`);
  for (const sid of [id, shared.escapedChild].filter((x): x is string => Boolean(x))) {
    patchSessionRecord(s.project.governanceDir, sid, (r) => {
      for (const k of ["lastActivityAt", "updatedAt", "createdAt", "interruptedAt", "idleAt"]) if (typeof r[k] === "number") r[k] -= 2 * HOUR;
      if (r.lastToolCall) r.lastToolCall.at -= 2 * HOUR;
    });
  }
  const from = s.mark();
  t.line(`$ opencode run --agent ${COORDINATOR} -s ${short(id)} "continue"`);
  const run = await s.tail(["plugin_started", "session_resumed", "resume_context_skipped"], () =>
    runOpencode(s.project, ["--agent", COORDINATOR, "-s", id, `${MARK.resume} continue`], { timeoutMs: 30_000 }),
  );
  expect(run.code === 0, `opencode run exited ${run.code}: ${run.stderr.slice(-400)}`);
  const step = s.stepsOf(id, from)[0];
  expect(step, "the resumed session made no model request");
  const note = statusNote(step) ?? "";
  expect(note.includes(RESUME), "the resumed session's first model step had no resume context");
  t.line("the first model step of the resumed session received, in the governance status note at the end of the request:");
  t.quote(note.slice(note.indexOf(RESUME)), 12);
  const r = s.record(id);
  t.line(`record ${short(id)}: resumes ${r?.counters?.resumes}, state ${r?.state}`);
}
