import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { allSessionRecords, auditEvents, e2eHost, Gate, type ModelRequest, projectCli, type Reply, textOf, waitFor } from "../harness/index.ts";
import { type ReceivedSpan, startOtlpReceiver } from "../harness/otlp-receiver.ts";

/**
 * Issue 18 end to end: one real `opencode serve` with OpenCode's own OTLP export on (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `experimental.openTelemetry: true`) and the built plugin, both exporting to one real OTLP receiver on 127.0.0.1.
 * Three user prompts: a delegation chain ending in an emergency halt, a CLI stop of a running subagent, an Escape.
 */
const SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123";

describe("OpenTelemetry export: the session tree as GenAI spans, decisions as events, metrics and logs (real opencode serve → real OTLP receiver)", () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  const gate = new Gate();

  const toolCount = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").length;
  const task = (type: string, prompt: string): Reply => ({
    toolCalls: [{ name: "task", args: { description: prompt.slice(0, 20), prompt, subagent_type: type } }],
  });

  async function respond(req: ModelRequest): Promise<Reply> {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = toolCount(req);
    // Prompt 1: coordinator → high → executor → verifier, whose own spawn (depth 4 > maxDepth 3) is halted.
    if (first.includes("CHAIN-0")) return tools === 0 ? task("governance-high", "CHAIN-1") : { text: "chain done" };
    if (first.includes("CHAIN-1")) return tools === 0 ? task("governance-executor", "CHAIN-2") : { text: "level 1 done" };
    if (first.includes("CHAIN-2")) return tools === 0 ? task("governance-verifier", "CHAIN-3") : { text: "level 2 done" };
    if (first.includes("CHAIN-3")) return tools === 0 ? task("governance-validator", "CHAIN-4 too deep") : { text: "level 3 saw the halt" };
    // Prompt 2: the coordinator delegates to an executor that reads in a loop until it is stopped from the CLI.
    if (first.includes("STOP-0")) return tools === 0 ? task("governance-executor", "STOP-LOOP") : { text: "parent saw the stop" };
    if (first.includes("STOP-LOOP")) {
      if (tools > 0) await gate.wait();
      return { toolCalls: [{ name: "read", args: { filePath: `${project.dir}/notes.txt` } }] };
    }
    // Prompt 3: the coordinator delegates to an executor stuck in an endless stream; the user presses Escape.
    if (first.includes("ESC-0")) return tools === 0 ? task("governance-executor", "ESC-HANG") : { text: "after escape" };
    if (first.includes("ESC-HANG")) return { hang: true };
    return { text: "ok" };
  }

  const { model, project, serve } = e2eHost({
    respond,
    agents: true,
    governanceYaml: "telemetry:\n  toolSpans: true\n",
    opencodeConfig: { experimental: { openTelemetry: true } },
    files: { "notes.txt": "loop output\n" },
    beforeServe: async () => {
      receiver = await startOtlpReceiver();
    },
    serveEnv: () => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BLRP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "300",
    }),
    afterServe: async () => {
      await receiver?.close();
      if (process.env.OTEL_DUMP)
        writeFileSync(process.env.OTEL_DUMP, JSON.stringify({ spans: receiver.spans, metrics: receiver.metrics, logs: receiver.logs }, null, 1));
    },
    timeoutMs: 60_000,
  });
  afterAll(() => gate.releaseAll());

  const ours = () => receiver.spans.filter((s) => s.service === "opencode-governance");
  const turnsOf = (sessionId: string) => ours().filter((s) => s.name.startsWith("invoke_agent") && s.attributes["gen_ai.conversation.id"] === sessionId);
  const byId = (spanId: string) => ours().find((s) => s.spanId === spanId);
  /** Every session of the tree under `root` (from the plugin's records), with its parent. */
  const treeOf = (root: string) => allSessionRecords(project.governanceDir).filter((r) => r.rootId === root);

  /** The tree's shape, drawn from the spans: each session's turn span under its parent session's turn span. */
  function assertTreeShape(root: string) {
    const sessions = treeOf(root);
    for (const s of sessions) {
      const turns = turnsOf(s.sessionId);
      expect(turns.length, `one turn span for ${s.sessionId} (${s.agent})`).toBe(1);
      const span = turns[0]!;
      expect(span.kind).toBe("SPAN_KIND_INTERNAL");
      if (s.parentId === null) expect(span.parentSpanId, "a root session's turn is a trace root").toBe("");
      else expect(byId(span.parentSpanId)?.attributes["gen_ai.conversation.id"], `parent of ${s.agent}`).toBe(s.parentId);
      expect(span.traceId).toBe(turnsOf(root)[0]!.traceId);
    }
    return sessions;
  }

  test("a delegation chain ending in an emergency halt: one trace, one invoke_agent span per session, nested like the session tree", async () => {
    const root = (await serve.http.createSession()).id;
    await serve.http.prompt(root, "CHAIN-0 delegate down", { agent: "governance-coordinator" });
    await waitFor(
      () => treeOf(root).length === 4 && turnsOf(root).length === 1 && treeOf(root).every((s) => turnsOf(s.sessionId).length === 1),
      "4 turn spans exported",
      15_000,
    );
    const sessions = assertTreeShape(root);
    expect(sessions.map((s) => s.depth).sort()).toEqual([0, 1, 2, 3]);

    const rootSpan = turnsOf(root)[0]!;
    expect(rootSpan.name).toBe("invoke_agent governance-coordinator");
    expect(rootSpan.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "governance-coordinator",
      "gen_ai.conversation.id": root,
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "scripted-model",
      "governance.depth": 0,
      "governance.role": "primary",
      "governance.turn.outcome": "completed",
    });
    expect(Number(rootSpan.attributes["gen_ai.usage.input_tokens"])).toBeGreaterThan(0);
    const verifier = sessions.find((s) => s.depth === 3)!;
    const verifierSpan = turnsOf(verifier.sessionId)[0]!;
    expect(verifierSpan.name).toBe("invoke_agent governance-verifier");
    expect(verifierSpan.attributes).toMatchObject({ "governance.depth": 3, "governance.role": "delegating", "governance.parent_id": verifier.parentId });
    const halt = verifierSpan.events.find((e) => e.name === "governance.spawn.halted");
    expect(halt?.attributes).toMatchObject({ "governance.kind": "max_depth", "governance.target_agent": "governance-validator", "governance.child_depth": 4 });
    // The refused task call is an execute_tool span under the verifier's turn; the task calls above it too.
    const tools = ours().filter((s) => s.name.startsWith("execute_tool") && s.traceId === rootSpan.traceId);
    expect(tools.filter((t) => t.attributes["gen_ai.tool.name"] === "task").length).toBe(4);
    for (const t of tools) expect(byId(t.parentSpanId)?.name).toMatch(/^invoke_agent /);
  }, 120_000);

  test("a CLI stop of a running subagent: stop requested, directive delivered and the stop as events on the child's turn", async () => {
    const root = (await serve.http.createSession()).id;
    await serve.http.promptAsync(root, "STOP-0 delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child session");
    await waitFor(() => model.requests.filter((r) => r.kind === "agent" && r.sessionId === child).length >= 2, "child at its second step");
    const stop = await projectCli(project, ["stop", child, "--level", "3", "--reason", `wrong approach token=${SECRET}`]);
    expect(stop.code, stop.stderr).toBe(0);
    await waitFor(
      () => auditEvents(project.governanceDir).some((e) => e.type === "session_stop_requested" && e.sessionId === child),
      "plugin noticed the stop",
    );
    gate.releaseAll();
    await serve.http.waitIdle([root, child], 20_000);
    await waitFor(() => turnsOf(root).length === 1 && turnsOf(child).length >= 1, "turn spans exported", 15_000);
    assertTreeShape(root);
    const events = turnsOf(child).flatMap((s) => s.events);
    const requested = events.find((e) => e.name === "governance.stop.requested");
    expect(requested?.attributes["governance.level"]).toBe(3);
    // Free text (the stop reason) stays home unless the user's own config opts in (issue 27 §3).
    expect(requested?.attributes).not.toHaveProperty("governance.reason");
    expect(events.map((e) => e.name)).toEqual(expect.arrayContaining(["governance.stop.requested", "governance.stop.directive_delivered"]));
    // Nothing secret left the machine, in any signal.
    expect(JSON.stringify([receiver.spans, receiver.logs, receiver.metrics])).not.toContain(SECRET);
  }, 120_000);

  test("Escape on the parent: the parent's turn and its running child's end interrupted, with the Escape as an event", async () => {
    const root = (await serve.http.createSession()).id;
    await serve.http.promptAsync(root, "ESC-0 delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child session");
    await waitFor(() => model.requests.some((r) => r.kind === "agent" && r.sessionId === child), "child streaming");
    await serve.http.abort(root);
    await serve.http.waitIdle([root, child], 20_000);
    await waitFor(() => turnsOf(root).length === 1 && turnsOf(child).length === 1, "turn spans exported", 15_000);
    assertTreeShape(root);
    expect(turnsOf(root)[0]!.attributes["governance.turn.outcome"]).toBe("interrupted");
    expect(turnsOf(root)[0]!.events.map((e) => e.name)).toContain("governance.escape");
    expect(turnsOf(child)[0]!.attributes["governance.turn.outcome"]).toBe("interrupted");
  }, 60_000);

  test("metrics and the audit events as log records reach the receiver; OpenCode's own spans carry the same session ids", async () => {
    const metric = (name: string) => receiver.metrics.filter((m) => m.service === "opencode-governance" && m.name === name);
    await waitFor(() => metric("governance.escapes").length > 0 && metric("governance.stops").length > 0, "metrics exported", 10_000);
    const last = (name: string) => metric(name).at(-1)!.points;
    expect(last("governance.spawn.halts")).toEqual([expect.objectContaining({ attributes: { reason: "max_depth", enforced: true }, value: 1 })]);
    expect(last("governance.stops")).toEqual(
      expect.arrayContaining([expect.objectContaining({ attributes: { level: "3", outcome: "requested", origin: "user" }, value: 1 })]),
    );
    expect(last("governance.escapes").reduce((n, p) => n + p.value, 0)).toBeGreaterThanOrEqual(1);
    expect(last("governance.sessions").some((p) => p.attributes["governance.depth"] === 3)).toBe(true);
    const hooks = new Set(last("governance.hook.duration").map((p) => p.attributes["governance.hook"]));
    // The hook's job, named the same on both hosts (plugin/wiring/host-adapter.ts HOOK_JOBS).
    expect([...hooks]).toEqual(expect.arrayContaining(["event", "prompt", "model.step", "tool.execute.before", "tool.execute.after"]));

    // Every audit line of this process is a log record, with the same attributes as the span events.
    const logs = receiver.logs.filter((l) => l.service === "opencode-governance");
    const audit = auditEvents(project.governanceDir);
    const halted = logs.find((l) => l.body === "emergency_halt");
    expect(halted?.attributes).toMatchObject({ "governance.event": "emergency_halt", "governance.kind": "max_depth" });
    expect(halted?.traceId, "a log record joins its turn's trace").toMatch(/^[0-9a-f]{32}$/);
    for (const type of ["plugin_started", "session_created", "child_linked", "session_stop_requested", "session_aborted", "telemetry_started"]) {
      expect(
        logs.some((l) => l.body === type),
        type,
      ).toBe(true);
      expect(
        audit.some((e) => e.type === type),
        type,
      ).toBe(true);
    }
    // No path, no pid, no project directory in what leaves the machine.
    expect(JSON.stringify(logs)).not.toContain(project.dir);

    // OpenCode's own export (service "opencode"): its AI SDK spans name our sessions in ai.telemetry.metadata.sessionId.
    const opencodeSpans = receiver.spans.filter((s) => s.service !== "opencode-governance");
    const sessionIds = new Set(allSessionRecords(project.governanceDir).map((r) => r.sessionId));
    const joined = opencodeSpans.filter((s: ReceivedSpan) =>
      sessionIds.has(String(s.attributes["ai.telemetry.metadata.sessionId"] ?? s.attributes["session.id"] ?? "")),
    );
    expect(opencodeSpans.length, "OpenCode exported its own spans").toBeGreaterThan(0);
    expect(new Set(joined.map((s) => s.attributes["ai.telemetry.metadata.sessionId"])).size, "OpenCode spans for our sessions").toBeGreaterThanOrEqual(4);
  });
});
