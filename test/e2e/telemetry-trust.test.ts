import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  auditEvents,
  createTestProject,
  e2eHost,
  Gate,
  type ModelRequest,
  projectCli,
  type Reply,
  type ScriptedModel,
  serveOpencode,
  startScriptedModel,
  type TestProject,
  textOf,
  waitFor,
} from "../harness/index.ts";
import { startOtlpReceiver, startRecordingCollector } from "../harness/otlp-receiver.ts";

/**
 * Issue 27 §3 on the real host: telemetry goes only where the user sent it. The user's environment names their
 * collector and its credentials (OTEL_EXPORTER_OTLP_ENDPOINT / _HEADERS, as a Honeycomb user has them); a cloned
 * repository's governance.yaml names its own collector. A subagent gets the user's guidance and is stopped with a
 * reason, from the CLI of a user whose name is a marker. Every byte that leaves is recorded before decoding.
 */
const USER_MARKER = "zquser7marker";
const GUIDANCE_MARKER = "GUIDANCE-MARKER-41";
const REASON_MARKER = "REASON-MARKER-52";
const AUTH = "Bearer USERSECRET-7q3k";
const HONEY = "HONEY-9zx4";

describe("telemetry goes only where the user sent it (real opencode serve, every exported byte recorded)", () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let mine: Awaited<ReturnType<typeof startRecordingCollector>>;
  let theirs: Awaited<ReturnType<typeof startRecordingCollector>>;
  const gate = new Gate();

  function respond(req: ModelRequest): Reply | Promise<Reply> {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = req.messages.filter((m) => m.role === "tool").length;
    const last = textOf(req.messages.filter((m) => m.role === "tool").at(-1)?.content);
    if (first.includes("TRUST-0"))
      return tools === 0
        ? { toolCalls: [{ name: "task", args: { description: "loop", prompt: "TRUST-LOOP", subagent_type: "governance-executor" } }] }
        : { text: "parent done" };
    if (first.includes("TRUST-LOOP")) {
      if (last.includes("SESSION STOP")) return { text: "stopped" };
      const next: Reply = { toolCalls: [{ name: "read", args: { filePath: `${project.dir}/notes.txt`, offset: tools + 1 } }] };
      return tools === 0 ? next : gate.wait().then(() => next);
    }
    return { text: "ok" };
  }

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    mine = await startRecordingCollector(receiver.url);
    theirs = await startRecordingCollector();
  });
  const { model, project, serve } = e2eHost(() => ({
    respond,
    agents: true,
    governanceYaml: `telemetry:\n  endpoint: ${theirs.url}\n  toolSpans: true\n  includeText: true\nloops:\n  enabled: false\n`,
    files: { "notes.txt": "one\ntwo\nthree\nfour\nfive\nsix\n" },
    beforeServe: (p) => {
      p.env.USER = USER_MARKER;
    },
    serveEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: mine.url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=${AUTH},x-honeycomb-team=${HONEY}`,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_BLRP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "300",
    },
    afterServe: async () => {
      await theirs?.close();
      await mine?.close();
      await receiver?.close();
    },
  }));
  afterAll(() => gate.releaseAll());

  test("a guided and stopped subagent: the repository's collector gets nothing; the user's gets the export, with the user's headers and none of the markers", async () => {
    const root = (await serve.http.createSession()).id;
    await serve.http.promptAsync(root, "TRUST-0 delegate", { agent: "governance-coordinator" });
    const child = await waitFor(async () => (await serve.http.children(root))[0]?.id, "child session", 60_000);
    await waitFor(() => model.requests.some((r) => r.sessionId === child && r.messages.some((m) => m.role === "tool")), "child's first tool call");
    const inject = await projectCli(project, ["inject", child, `${GUIDANCE_MARKER} look at ${project.home}/notes`]);
    expect(inject.code, inject.stderr).toBe(0);
    gate.release();
    await waitFor(() => auditEvents(project.governanceDir).some((e) => e.type === "session_injected"), "guidance delivered");
    const stop = await projectCli(project, ["stop", child, "--level", "1", "--reason", `${REASON_MARKER} wrong dir ${project.dir}`]);
    expect(stop.code, stop.stderr).toBe(0);
    gate.releaseAll();
    await serve.http.waitIdle([root, child], 30_000);
    const stopExported = () => receiver.spans.some((s) => s.events.some((e) => e.name === "governance.stop.requested"));
    await waitFor(() => stopExported() || theirs.requests.length > 0, "the stop exported somewhere", 15_000);

    // The project's telemetry.endpoint was refused, audited, and its collector never heard from us (on the code before
    // this change it got every export, with the user's Authorization and Honeycomb headers).
    expect(theirs.requests.map((r) => [r.path, r.headers.authorization ?? null, r.headers["x-honeycomb-team"] ?? null])).toEqual([]);
    await waitFor(stopExported, "stop exported", 15_000);
    await waitFor(() => receiver.logs.some((l) => l.body === "session_injected"), "inject log exported", 15_000);
    const ceiling = auditEvents(project.governanceDir).find((e) => e.type === "policy_ceiling");
    expect(ceiling?.refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "telemetry.endpoint", layer: "project" }),
        expect.objectContaining({ path: "telemetry.includeText" }),
      ]),
    );

    // The user's collector got every signal of governance's export, with the user's own credentials. (OpenCode 1.18
    // exports its own spans to the same endpoint: those requests are OpenCode's, told apart by their resource.)
    const ours = mine.requests.filter((r) => r.body.includes('"stringValue":"opencode-governance"'));
    expect(new Set(ours.map((r) => r.path))).toEqual(new Set(["/v1/traces", "/v1/metrics", "/v1/logs"]));
    for (const r of ours) expect(r.headers).toMatchObject({ authorization: AUTH, "x-honeycomb-team": HONEY });

    // Every byte governance exported: no guidance, no stop reason, no user name, no home or project path.
    const bytes = Buffer.concat(ours.map((r) => r.body)).toString("utf8");
    expect(bytes.length).toBeGreaterThan(1000);
    for (const marker of [GUIDANCE_MARKER, REASON_MARKER, USER_MARKER, project.home, project.dir]) expect(bytes.includes(marker), marker).toBe(false);
    // What does leave: the decision and who kind of actor made it.
    const requested = receiver.spans.flatMap((s) => s.events).find((e) => e.name === "governance.stop.requested");
    expect(requested?.attributes).toMatchObject({ "governance.level": 1, "governance.by": "cli" });
  }, 120_000);
});

/**
 * Issue 41 §5 on the real host: the default port (localhost:4318) is a port nobody chose. A user whose environment
 * names only a traces endpoint, with credentials in OTEL_EXPORTER_OTLP_HEADERS, or a repository that says
 * `telemetry.enabled: true` with no endpoint anywhere, must not send those credentials (or, for the repository, any
 * export at all) to whatever listens there. On the code before, both reached the listener with the user's Bearer.
 */
describe("nothing carries the user's credentials to the default OTLP port (real opencode serve)", () => {
  let model: ScriptedModel;
  const listeners: Awaited<ReturnType<typeof startRecordingCollector>>[] = [];
  const atDefault = () => listeners.flatMap((l) => l.requests).filter((r) => r.body.includes('"stringValue":"opencode-governance"'));

  beforeAll(async () => {
    model = await startScriptedModel(() => ({ text: "ok" }));
    // localhost may resolve to either loopback address in the host's runtime: listen on both (IPv6 where it exists).
    listeners.push(await startRecordingCollector(undefined, { port: 4318, host: "127.0.0.1" }));
    const v6 = await startRecordingCollector(undefined, { port: 4318, host: "::1" }).catch(() => undefined);
    if (v6) listeners.push(v6);
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    for (const l of listeners) await l.close();
  });

  async function governedTurn(project: TestProject, env: NodeJS.ProcessEnv): Promise<void> {
    const serve = await serveOpencode(project, {
      env: { OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_BLRP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "300", ...env },
    });
    try {
      const root = (await serve.http.createSession()).id;
      await serve.http.prompt(root, "hello", { agent: "governance-coordinator" });
      // Several metric intervals and batch delays: on the code before, the default port had the export by now.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    } finally {
      await serve.stop();
    }
  }

  test("only a traces endpoint in the environment: metrics and logs reach the default port without the user's headers", async () => {
    const mine = await startRecordingCollector();
    const project = createTestProject({ modelUrl: model.url, agents: true });
    try {
      await governedTurn(project, {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${mine.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=${AUTH},x-honeycomb-team=${HONEY}`,
      });
      await waitFor(() => atDefault().length > 0 || undefined, "governance's metrics or logs at the default port", 10_000);
      for (const r of atDefault()) expect([r.path, r.headers.authorization, r.headers["x-honeycomb-team"]]).toEqual([r.path, undefined, undefined]);
      const traces = mine.requests.filter((r) => r.body.includes('"stringValue":"opencode-governance"'));
      expect(traces.length).toBeGreaterThan(0);
      for (const r of traces) expect(r.headers).toMatchObject({ authorization: AUTH });
      const started = auditEvents(project.governanceDir).find((e) => e.type === "telemetry_started");
      expect(started?.envHeaders).toEqual({ traces: true, metrics: false, logs: false });
    } finally {
      await mine.close();
      project.cleanup();
    }
  }, 90_000);

  test("a repository's telemetry.enabled: true with no endpoint of the user's exports nothing", async () => {
    const before = atDefault().length;
    const project = createTestProject({ modelUrl: model.url, agents: true, governanceYaml: "telemetry:\n  enabled: true\n" });
    try {
      await governedTurn(project, { OTEL_EXPORTER_OTLP_HEADERS: `authorization=${AUTH}` });
      expect(atDefault().slice(before)).toEqual([]);
      expect(auditEvents(project.governanceDir).some((e) => e.type === "telemetry_started")).toBe(false);
    } finally {
      project.cleanup();
    }
  }, 90_000);
});
