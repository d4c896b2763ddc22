import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import {
  auditEvents,
  createTestProject,
  e2eModel,
  governanceBytes,
  governanceToolEntries,
  type ModelRequest,
  REPO_ROOT,
  type Respond,
  runOpencode,
  type TestProject,
} from "../harness/index.ts";

const PREFIX_HEADING = "## Governance Context (opencode-governance)";

/** Two tool steps, then a final answer: three agent requests per run, two of them after tool results. */
const twoToolsThenAnswer: Respond = (req) => {
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  if (toolResults === 0) return { toolCalls: [{ name: "bash", args: { command: "echo first", description: "first step" } }] };
  if (toolResults === 1) return { toolCalls: [{ name: "read", args: { filePath: "README.md" } }] };
  return { text: "All done." };
};

describe("governance prefix reaches every model request (real opencode run)", () => {
  const model = e2eModel(twoToolsThenAnswer);
  const projects: TestProject[] = [];
  afterAll(() => {
    for (const p of projects) p.cleanup();
  });

  async function runOnce(plugin: "local" | "none", opencodeConfig?: Record<string, unknown>): Promise<{ project: TestProject; requests: ModelRequest[] }> {
    const project = createTestProject({
      modelUrl: model.url,
      plugin,
      files: { "README.md": "# demo project\n" },
      ...(opencodeConfig ? { opencodeConfig } : {}),
    });
    projects.push(project);
    const before = model.requests.length;
    const result = await runOpencode(project, ["Please inspect the project."]);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    return { project, requests: model.requests.slice(before).filter((r) => r.kind === "agent") };
  }

  test("with the plugin: every agent step, including those after tool calls, carries the prefix", async () => {
    const { project, requests } = await runOnce("local");
    expect(requests.length).toBe(3);
    expect(requests.filter((r) => r.messages.some((m) => m.role === "tool")).length).toBe(2);
    for (const r of requests) expect(r.system).toContain(PREFIX_HEADING);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "plugin_started")).toBe(true);
  });

  test("the build agent's governance text per request — prefix + governance tool schema — is at most 1 000 bytes (issue 31)", async () => {
    const { requests } = await runOnce("local");
    expect(requests.length).toBe(3);
    for (const r of requests) {
      const b = governanceBytes(r);
      // Both parts are there (a measurement of nothing would pass), and together within the budget.
      expect(b.prefix).toBeGreaterThan(200);
      expect(governanceToolEntries(r).map((t) => t.function.name)).toEqual(["governance"]);
      expect(b.prefix + b.tools, `prefix ${b.prefix} B + tool ${b.tools} B: ${JSON.stringify(governanceToolEntries(r))}`).toBeLessThanOrEqual(1000);
    }
  });

  test("as a package in opencode.json's plugin list, resolved through package.json like an npm install", async () => {
    // OpenCode resolves a package folder by its package.json (exports["./server"] or main), as it does for npm plugins.
    const { project, requests } = await runOnce("none", { plugin: [pathToFileURL(REPO_ROOT).href] });
    expect(requests.length).toBe(3);
    for (const r of requests) expect(r.system).toContain(PREFIX_HEADING);
    expect(auditEvents(project.governanceDir).some((e) => e.type === "plugin_started")).toBe(true);
  });

  test("without the plugin the same run carries no prefix (the assertion above can fail)", async () => {
    const { project, requests } = await runOnce("none");
    expect(requests.length).toBe(3);
    for (const r of requests) expect(r.system).not.toContain(PREFIX_HEADING);
    expect(auditEvents(project.governanceDir)).toEqual([]);
  });
});
