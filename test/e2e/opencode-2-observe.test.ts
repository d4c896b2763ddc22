/**
 * What the user sees of governance on the real OpenCode 2.0.15 (issue 40): the OpenTelemetry export and the TUI's
 * governance toasts on one `opencode serve` (the TUI attaches to it with `--server`, as `opencode --server <url>` does),
 * then, on a `serve` of its own, governance noticing a host that stops calling its prefix hook (`governance_gap`).
 * The plugin is the package directory listed in `plugins` (its root index.js and tui.js, docs/decisions/0059). The
 * same rows on OpenCode 1: telemetry.test.ts, tui-escape-resume.test.ts, governance-gap.test.ts.
 */
import { afterAll, describe, expect, test } from "vitest";
import { startOtlpReceiver } from "../harness/otlp-receiver.ts";
import { missing } from "../harness/system-tools.ts";
import {
  allSessionRecords,
  auditEvents,
  e2eHost2,
  firstUser,
  killAllTuis,
  lastOf,
  type ModelRequest,
  onOpencode2,
  projectCli,
  type Reply,
  REPO_ROOT,
  startTui,
  type Tui,
  waitFor,
} from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";

const subagent = (agent: string, prompt: string): Reply => ({
  toolCalls: [{ name: "subagent", args: { agent, description: `hand over to ${agent}`, prompt } }],
});
const shell = (command: string, delayMs = 0): Reply => ({ toolCalls: [{ name: "shell", args: { command, description: command } }], delayMs });

/** `ROOT <case>` prompts a coordinator; its children get `CHILD <case>`. */
function respond(req: ModelRequest): Reply {
  const first = firstUser(req);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = lastOf(req, "tool") ?? "";
  if (last.includes("SESSION STOP") || last.includes("SESSION TERMINATED")) return { text: "stopped as asked" };
  const root = /\bROOT (\S+)/.exec(first)?.[1];
  const child = /\bCHILD (\S+)/.exec(first)?.[1];
  if (root) {
    // First a delegation outside the coordinator's allow-list (blocked), then one governance lets through.
    if (tools === 0) return subagent("governance-planner", `CHILD ${root}-blocked`);
    if (tools === 1) return subagent(root === "tui" ? "governance-verifier" : "governance-executor", `CHILD ${root}`);
    return { text: `ROOT-${root}-DONE` };
  }
  if (child === "otel") return tools === 0 ? shell("echo otel-child") : { text: "child done" };
  // The verifier's budget is two tool calls: the third result carries governance's stop.
  if (child === "tui") return tools < 20 ? shell(`echo budget-${tools}`, 100) : { text: "never stopped" };
  if (first.includes("HELLO")) return { text: "HELLO-ANSWERED" };
  return { text: "ok" };
}

const GOVERNANCE_YAML = [
  "telemetry:",
  "  toolSpans: true",
  "loops:",
  "  enabled: false",
  "budgets:",
  "  agents:",
  "    governance-verifier: { toolCalls: 2 }",
  "agents:",
  "  governance-coordinator:",
  "    role: primary",
  "    mayDelegateTo: [governance-executor, governance-verifier]",
  "",
].join("\n");

onOpencode2("OpenCode 2 observability, real host", (host) => {
  describe(`OpenCode ${host.version}, real host: OpenTelemetry export and the TUI's governance toasts`, () => {
    let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
    const { project, serve, events } = e2eHost2(host, {
      respond,
      agents: true,
      // The package directory in `plugins`: 2.0.15 loads its root index.js, and its TUI the root tui.js.
      plugin: "none",
      opencodeConfig: { plugins: [REPO_ROOT] },
      governanceYaml: GOVERNANCE_YAML,
      beforeServe: async () => {
        receiver = await startOtlpReceiver();
      },
      afterServe: () => receiver?.close(),
      serveEnv: () => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: "100",
        OTEL_BLRP_SCHEDULE_DELAY: "100",
        OTEL_METRIC_EXPORT_INTERVAL: "300",
      }),
    });
    afterAll(() => killAllTuis());

    const ours = () => receiver.spans.filter((s) => s.service === "opencode-governance");
    const turnsOf = (sessionId: string) => ours().filter((s) => s.name.startsWith("invoke_agent") && s.attributes["gen_ai.conversation.id"] === sessionId);

    test("OTel: one trace per task tree, the child's turn under its parent's, the refused spawn as an event, metrics (hook durations too) and logs", async () => {
      const root = (await serve.api.createSession({ agent: "governance-coordinator" })).id;
      expect((await serve.api.run(root, "ROOT otel", 90_000)).outcome).toBe("succeeded");
      const child = allSessionRecords(project.governanceDir).find((r) => r.parentId === root)?.sessionId as string;
      expect(child, "the executor child").toBeDefined();
      await waitFor(() => turnsOf(root).length === 1 && turnsOf(child).length === 1, "both turn spans exported", 20_000);
      const [rootSpan, childSpan] = [turnsOf(root)[0]!, turnsOf(child)[0]!];
      expect(rootSpan.parentSpanId, "a root session's turn is a trace root").toBe("");
      expect(childSpan.traceId).toBe(rootSpan.traceId);
      expect(ours().find((s) => s.spanId === childSpan.parentSpanId)?.attributes["gen_ai.conversation.id"]).toBe(root);
      expect(rootSpan.attributes).toMatchObject({
        "gen_ai.agent.name": "governance-coordinator",
        "governance.depth": 0,
        "governance.turn.outcome": "completed",
      });
      expect(childSpan.attributes).toMatchObject({ "gen_ai.agent.name": "governance-executor", "governance.depth": 1, "governance.parent_id": root });
      const refused = rootSpan.events.find((e) => e.name === "governance.spawn.refused");
      expect(refused?.attributes).toMatchObject({ "governance.target_agent": "governance-planner" });
      // No execute_tool spans on OpenCode 2 yet: its tool events name no tool and carry no times (docs/opencode-2.md).

      const metric = (name: string) => receiver.metrics.filter((m) => m.service === "opencode-governance" && m.name === name);
      await waitFor(() => metric("governance.spawn.refusals").length > 0 && metric("governance.hook.duration").length > 0, "metrics exported", 15_000);
      expect(metric("governance.spawn.refusals").at(-1)!.points).toEqual([expect.objectContaining({ value: 1 })]);
      // Every hook of OpenCode 2's adapter is timed as OpenCode 1's are, under the same job names (one wiring, Conventions 19).
      const hooks = new Set(metric("governance.hook.duration").flatMap((m) => m.points.map((p) => p.attributes["governance.hook"])));
      expect([...hooks]).toEqual(expect.arrayContaining(["event", "prompt", "model.step", "tool.execute.before", "tool.execute.after"]));
      await waitFor(() => receiver.logs.some((l) => l.service === "opencode-governance" && l.body === "delegation_blocked"), "the audit line as a log record");
      const blocked = receiver.logs.find((l) => l.service === "opencode-governance" && l.body === "delegation_blocked")!;
      expect(blocked.traceId).toBe(rootSpan.traceId);
      expect(JSON.stringify(receiver.logs.filter((l) => l.service === "opencode-governance"))).not.toContain(project.dir);
    });

    test.skipIf(missing("tmux") !== "")(
      "the TUI (`opencode --server`): a blocked delegation and a budget stop in another session show as governance toasts; Open goes to that session",
      async () => {
        const tui: Tui = startTui(project, ["--server", serve.url]);
        await tui.waitForScreen("Ask anything", "the TUI's prompt", 60_000);
        // The user works in a session of their own.
        await tui.submit("HELLO there");
        await tui.waitForScreen("HELLO-ANSWERED", "the answer in the TUI", 60_000);
        // Meanwhile another task tree (here started through the API) runs into governance.
        const root = (await serve.api.createSession({ agent: "governance-coordinator" })).id;
        await serve.api.prompt(root, "ROOT tui");
        // The toast is the server plugin's notice (a `host_notice` line naming the session), word-wrapped by the TUI.
        expect(await waitFor(() => events("host_notice", root)[0], "the notice")).toMatchObject({
          message: "Delegation blocked: governance-coordinator → governance-planner",
          variant: "warning",
        });
        const screen = await tui.waitForScreen("Delegation blocked:", "the blocked delegation's toast", 30_000);
        expect(screen).toContain("Governance");
        expect(screen).toContain("governance-planner");
        expect(screen).toContain("› Open");
        const child = await waitFor(() => events("budget_exceeded")[0]?.sessionId as string | undefined, "the verifier's budget stop", 30_000);
        const notice = await waitFor(() => events("host_notice", child)[0], "the budget stop's notice");
        expect(notice.message).toContain("Budget exceeded (governance-verifier)");
        // Toasts queue (8 s each): the budget stop's own, about the verifier, not the parent's "was stopped" that
        // follows it (about the root). The TUI wraps the text inside the toast's borders.
        const budget = await tui.waitForScreen(/Budget exceeded[\s┃]*\(governance-verifier\)/, "the budget stop's toast", 30_000);
        // Open: the toast's action, clicked, shows the session it is about.
        const lines = budget.split("\n");
        const row = lines.findIndex((l) => l.includes("› Open"));
        tui.click(lines[row]!.indexOf("› Open") + 2, row);
        await tui.waitForScreen(/echo budget-\d/, "the verifier's session in the TUI", 15_000);
        tui.kill();
      },
    );
  });

  describe(`OpenCode ${host.version}, real host: governance reports when the host stops calling its prefix hook`, () => {
    const { model, project, serve } = e2eHost2(host, {
      respond: (req) => (req.messages.some((m) => m.role === "tool") ? { text: "Done." } : shell("echo hi")),
      allowGovernanceGaps: true,
      serveEnv: { OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS: "prefix" },
    });

    test("within two steps: one governance_gap line (prefix, host 2 and its version), one notice naming the session; coverage in doctor", async () => {
      const first = (await serve.api.createSession()).id;
      expect((await serve.api.run(first, "Please say hi.")).outcome).toBe("succeeded");
      const steps = model.requests.filter((r) => r.kind === "agent" && r.sessionId === first);
      expect(steps).toHaveLength(2);
      for (const r of steps) expect(r.system).not.toContain(PREFIX);
      const gap = await waitFor(() => auditEvents(project.governanceDir).find((e) => e.type === "governance_gap"), "a governance_gap line");
      expect(gap).toMatchObject({ sessionId: first, missing: "prefix", host: 2, hostVersion: host.version });
      const notices = auditEvents(project.governanceDir).filter((e) => e.type === "host_notice");
      expect(notices).toEqual([
        expect.objectContaining({ sessionId: first, variant: "warning", message: expect.stringContaining("Governance is not reaching") }),
      ]);
      await serve.stop();
      const doctor = await projectCli(project, ["doctor"]);
      expect(doctor.stdout).toMatch(/last session ses_\w+: prefix on 0\/2 steps, 1\/1 tool calls gated/);
      expect(doctor.stdout).toMatch(/governance gaps reported: 1/);
    });
  });
});
