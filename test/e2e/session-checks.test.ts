import { beforeAll, describe, expect, test } from "vitest";
import { allSessionRecords, auditEvents, e2eHost, type ModelRequest, type Respond, runOpencode, statusNote } from "../harness/index.ts";

/**
 * Issue 33 on the real binary: the coordinator's first call is a shell command instead of reading its todo list or
 * delegating. The record keeps the config's phase and the first action's miss, the miss is audited once, and the next
 * model step hears about it in the status note — the system prompt stays byte for byte what it was.
 */
const bashFirst: Respond = (req) => {
  const tools = req.messages.filter((m) => m.role === "tool").length;
  if (tools === 0) return { toolCalls: [{ name: "bash", args: { command: "ls", description: "look around" } }] };
  if (tools === 1) return { toolCalls: [{ name: "todoread", args: {} }] };
  return { text: "done" };
};

describe("session checks on the real host (opencode run, the shipped coordinator)", () => {
  let requests: ModelRequest[];
  const { model, project } = e2eHost({ respond: bashFirst, agents: true, governanceYaml: "phase: release\n", serve: false });
  beforeAll(async () => {
    const run = await runOpencode(project, ["--agent", "governance-coordinator", "Please look at the project."]);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    requests = model.requests.filter((r) => r.kind === "agent");
  });

  test("the record stores the phase and the missed first action; the audit log has it once", () => {
    const [root] = allSessionRecords(project.governanceDir).filter((r) => r.parentId === null);
    expect(root).toMatchObject({ schemaVersion: 2, agent: "governance-coordinator", phase: { phase: "release" }, firstTool: "bash" });
    expect(root!.firstAction).toMatchObject({ tool: "bash", role: "primary", ok: false });
    expect(root!.phaseHistory.map((p: { phase: string }) => p.phase)).toEqual(["release"]);
    const missed = auditEvents(project.governanceDir).filter((e) => e.type === "first_action_missed");
    expect(missed.map((e) => [e.sessionId, e.tool, e.role])).toEqual([[root!.sessionId, "bash", "primary"]]);
  });

  test("the next step's status note carries the reminder, the system prompt does not change", () => {
    expect(requests.length).toBe(3);
    expect(statusNote(requests[0]!) ?? "").not.toContain("First action missed");
    expect(statusNote(requests[1]!)).toContain(
      "**First action missed:** your first call was `bash`; as PRIMARY your first action is: Update the todo list (`todowrite`)",
    );
    expect(requests[1]!.system).toBe(requests[0]!.system);
    expect(requests[2]!.system).toBe(requests[0]!.system);
  });
});
