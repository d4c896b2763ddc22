/**
 * First-look numbers on the real OpenCode 1 binary (issue 39): after a root session delegated once, `status` and
 * `doctor` report the root's coverage with its child linked ("1/1 children linked", not "0/0"), and `status` counts
 * no session as running once the process has ended.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestProject, lastOf, type ModelRequest, type Reply, type ScriptedModel, serveOpencode, startScriptedModel, type TestProject, textOf } from "../harness/index.ts";
import { projectCli } from "../harness/project-cli.ts";

function respond(req: ModelRequest): Reply {
  const toolResults = req.messages.filter((m) => m.role === "tool").length;
  if (toolResults > 0) return { text: "finished" };
  const firstUser = textOf(req.messages.find((m) => m.role === "user")?.content);
  if (req.system.includes("You are the governance coordinator") && firstUser.includes("DELEGATE"))
    return { toolCalls: [{ name: "task", args: { description: "hand over", prompt: "DO it", subagent_type: "governance-executor" } }] };
  void lastOf;
  return { text: "done" };
}

describe("first-look numbers after a delegation (real opencode)", () => {
  let model: ScriptedModel;
  let project: TestProject;
  beforeAll(async () => {
    model = await startScriptedModel(respond);
    project = createTestProject({ modelUrl: model.url, agents: true });
  });
  afterAll(async () => {
    await model.close();
    project?.cleanup();
  });

  test("coverage names the root with its child linked; nothing counted as running after exit", async () => {
    const serve = await serveOpencode(project);
    let rootId = "";
    try {
      const root = await serve.http.createSession();
      rootId = root.id;
      await serve.http.prompt(root.id, "DELEGATE once", { agent: "governance-coordinator" });
      await serve.http.waitIdle([root.id]);
    } finally {
      await serve.stop();
    }
    const status = await projectCli(project, ["status"]);
    console.log(status.stdout);
    const doctor = await projectCli(project, ["doctor"]);
    console.log(doctor.stdout);
    expect(status.stdout).toContain(`coverage: last session ${rootId}:`);
    expect(status.stdout).toMatch(/1\/1 children linked/);
  });
});
