import type { ReceivedSpan } from "../../test/harness/otlp-receiver.ts";
import { textOf, waitFor } from "../../test/harness/index.ts";
import { SUBAGENT_STOPPED_HEADING } from "../../governance/texts/stop-directives.ts";
import { RUNAWAY_BUDGET } from "./config-edit.ts";
import { toolResults } from "./model-script.ts";
import { auditLine, COORDINATOR, type Stage } from "./stage.ts";
import { dim, expect, short } from "./timeline.ts";

/**
 * The scenes of what no other OpenCode plugin (nor Claude Code, Codex, Cline, Roo) does: a runaway subagent meeting
 * its budget, a loop caught by the loop guard, and the session tree exported as an OpenTelemetry trace.
 */

/** The note governance put in front of the parent's task result (not the prefix's rule that names the heading). */
export function parentNote(s: Stage, parent: string, from: number): string | undefined {
  const sealed = `${SUBAGENT_STOPPED_HEADING} [seal:`;
  const note = s
    .stepsOf(parent, from)
    .flatMap((r) => r.messages.filter((m) => m.role !== "system").map((m) => textOf(m.content)))
    .find((x) => x.includes(sealed));
  return note?.slice(note.indexOf(sealed));
}

/** A coordinator's delegation under way: its root session, and its whole run (child stopped, tree idle) when awaited. */
export type Tree = { parent: string; from: number; since: number; done: Promise<{ child: string } | { error: unknown }> };

/**
 * Starts one delegation with `marker` and does not wait: the budget and loop trees run side by side, so the demo
 * waits for the slower of the two, not for both in a row.
 */
export async function startTree(s: Stage, title: string, marker: string, childMarker: string): Promise<Tree> {
  const parent = (await s.http.createSession({ title })).id;
  const from = s.mark();
  const since = Date.now();
  await s.http.promptAsync(parent, `${marker} Go.`, { agent: COORDINATOR });
  const done = (async () => {
    const child = await s.sessionWith(childMarker, from, 20_000);
    await s.recordWhere(child, "the subagent stopped", (r) => r.control === "stopped", 30_000).catch(() => undefined);
    await s.http.waitIdle([parent, child], 15_000).catch(() => undefined);
    return { child };
  })().catch((error: unknown) => ({ error }));
  return { parent, from, since, done };
}

/** Waits for a tree started by {@link startTree}; a tree that never got its subagent fails the scene. */
async function finished(tree: Tree): Promise<{ parent: string; child: string; from: number; since: number }> {
  const r = await tree.done;
  if ("error" in r) throw r.error;
  return { parent: tree.parent, child: r.child, from: tree.from, since: tree.since };
}

/** Audit lines of one tree (its root and the root's descendants), for a scene whose tree ran while another printed. */
function ofTree(s: Stage, root: string) {
  return (e: { sessionId?: unknown }) => typeof e.sessionId === "string" && (e.sessionId === root || s.record(e.sessionId)?.rootId === root);
}

/** Returns the root session of its tree (the trace scene draws it). */
export async function budgetRunaway(s: Stage, tree: Tree): Promise<string> {
  const { t } = s;
  t.line(`governance.yaml gives governance-planner a budget of ${RUNAWAY_BUDGET} tool calls (budgets.agents; warnAt 0.8)`);
  t.line(`a coordinator delegates to the planner, whose model never stops reading (a runaway)`);
  t.line(dim("(the loop tree of scene 9 runs at the same time; its lines follow in scene 9)"));
  const run = await s.tail(
    ["budget_warning", "budget_exceeded", "stop_level_delivered", "session_stopped", "parent_notified"],
    () => finished(tree),
    ofTree(s, tree.parent),
  );
  const warning = s.auditOf("budget_warning", { sessionId: run.child, since: run.since })[0];
  expect(warning, "no budget_warning for the runaway planner");
  const notice = s
    .stepsOf(run.child, run.from)
    .flatMap(toolResults)
    .find((x) => x.includes("GOVERNANCE BUDGET NOTICE"));
  expect(notice, "no budget notice reached the planner's model");
  t.line(`at ${Math.round(0.8 * RUNAWAY_BUDGET)} of ${RUNAWAY_BUDGET} the planner's next tool result began with:`);
  t.quote(notice.slice(notice.indexOf("⏳")), 4);
  expect(s.auditOf("budget_exceeded", { sessionId: run.child, since: run.since }).length > 0, "no budget_exceeded for the runaway planner");
  const r = s.record(run.child);
  t.line(
    `record ${short(run.child)}: control ${r?.control}, stop reason ${JSON.stringify(r?.stop?.reason ?? "")}, levels ${JSON.stringify(r?.stop?.delivered ?? [])}`,
  );
  expect(r?.control === "stopped" && /budget/i.test(String(r?.stop?.reason)), `the planner was not stopped by its budget (control ${r?.control})`);
  const note = parentNote(s, run.parent, run.from);
  expect(note, "the coordinator was not told why its planner stopped");
  t.line("the coordinator's next model request told it why:");
  t.quote(note, 4);
  return run.parent;
}

/** Returns the root session of its tree (the trace scene draws it). */
export async function loopCaught(s: Stage, tree: Tree): Promise<string> {
  const { t } = s;
  t.line("a verifier reads README.md, then docs/notes.md, then README.md … and nothing changes (loops: pingPong 2, stopAfter 2)");
  const run = await finished(tree);
  const mine = ofTree(s, tree.parent);
  const types = new Set(["loop_detected", "stop_level_delivered", "session_stopped", "parent_notified"]);
  const at = (ms: number) => `${((ms - tree.since) / 1000).toFixed(1)} s after its prompt`;
  for (const e of s.audit().filter((e) => types.has(e.type) && e.at >= tree.since && mine(e))) t.line(`${auditLine(e)}  ${dim(at(e.at))}`);
  const stages = s.auditOf("loop_detected", { sessionId: run.child, since: run.since }).map((e) => String(e.stage));
  expect(stages.includes("notice"), "the loop guard gave no notice");
  const notice = s
    .stepsOf(run.child, run.from)
    .flatMap(toolResults)
    .find((x) => x.includes("GOVERNANCE LOOP NOTICE"));
  expect(notice, "no loop notice reached the verifier's model");
  t.line("its tool result at the second A-B cycle began with:");
  t.quote(notice.slice(notice.indexOf("🔁")), 3);
  expect(stages.includes("stop"), "the loop guard did not start the stop ladder");
  const r = s.record(run.child);
  t.line(`record ${short(run.child)}: control ${r?.control}, stop reason ${JSON.stringify(r?.stop?.reason ?? "")}`);
  expect(r?.control === "stopped", `the looping verifier was not stopped (control ${r?.control})`);
  expect(parentNote(s, run.parent, run.from), "the coordinator was not told why its verifier stopped");
  return run.parent;
}

/** The turn spans of the traces whose root session is one of `roots`, drawn as a tree: agent, session, outcome, events. */
export function spanTree(spans: readonly ReceivedSpan[], roots: readonly string[]): string[] {
  const turns = spans.filter((sp) => sp.service === "opencode-governance" && sp.name.startsWith("invoke_agent"));
  const traces = new Set(turns.filter((sp) => roots.includes(String(sp.attributes["gen_ai.conversation.id"]))).map((sp) => sp.traceId));
  const ours = turns.filter((sp) => traces.has(sp.traceId));
  const byParent = new Map<string, ReceivedSpan[]>();
  const ids = new Set(ours.map((sp) => sp.spanId));
  for (const sp of ours) {
    const key = ids.has(sp.parentSpanId) ? sp.parentSpanId : "";
    byParent.set(key, [...(byParent.get(key) ?? []), sp]);
  }
  const lines: string[] = [];
  const walk = (key: string, depth: number) => {
    for (const sp of (byParent.get(key) ?? []).sort((a, b) => a.startTimeUnixNano.localeCompare(b.startTimeUnixNano))) {
      const events = sp.events.map((e) => e.name.replace(/^governance\./, "")).filter((n, i, all) => all.indexOf(n) === i);
      const outcome = sp.attributes["governance.turn.outcome"];
      lines.push(
        `${"  ".repeat(depth)}${depth > 0 ? "└ " : ""}${sp.name}  ${short(String(sp.attributes["gen_ai.conversation.id"] ?? ""))}${outcome ? `  ${outcome}` : ""}${events.length ? `  [${events.join(", ")}]` : ""}`,
      );
      walk(sp.spanId, depth + 1);
    }
  };
  walk("", 0);
  return lines;
}

export async function traceTree(s: Stage, spans: readonly ReceivedSpan[], wanted: readonly string[]): Promise<void> {
  const { t } = s;
  expect(wanted.length > 0, "no session tree from the budget and loop scenes to look for");
  t.line("this OpenCode process exported its sessions over OTLP/HTTP to a local receiver on 127.0.0.1 (OTEL_EXPORTER_OTLP_ENDPOINT)");
  const rootsSeen = () => {
    const ours = spans.filter((sp) => sp.service === "opencode-governance" && sp.name.startsWith("invoke_agent"));
    return wanted.every((id) => ours.some((sp) => sp.attributes["gen_ai.conversation.id"] === id));
  };
  await waitFor(rootsSeen, "the turn spans of the budget and loop trees", 8_000).catch(() => undefined);
  const lines = spanTree(spans, wanted);
  expect(lines.length > 0, "the receiver got no invoke_agent span from opencode-governance");
  t.line(
    `the receiver got ${spans.filter((sp) => sp.service === "opencode-governance").length} spans from opencode-governance; the turn spans of the two trees above, nested as their sessions:`,
  );
  t.quote(lines.join("\n"), 40);
  expect(
    lines.some((l) => l.startsWith("  └ invoke_agent governance-planner")),
    "no planner turn span under its coordinator's",
  );
  expect(
    lines.some((l) => /stop/.test(l) && /budget/.test(l)),
    "no span carries the budget and stop events (expected on the planner's turn)",
  );
  t.line(dim("(gen_ai.* semantic conventions; every span names its session, agent, depth and the parent chain — docs/observability.md)"));
}
