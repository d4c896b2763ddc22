/**
 * Governance that notices when it is not governing (issue 25 item 5), on the real OpenCode 1 binary. A host update
 * that stops calling the prefix hook (OpenCode 1's hooks are `experimental.*`) looks like the test-only switch
 * `OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS=prefix` (plugin/index.ts): the plugin loads, the session runs, no request carries
 * the prefix. The host's own events (`step-start` parts) say steps happened; within two steps governance writes one
 * `governance_gap` line and tells the user once (a toast, seen here on the server's event stream). With everything
 * working no test writes such a line: test/harness/test-project.ts fails every other project's cleanup on one.
 */
import { describe, expect, test } from "vitest";
import { auditEvents, e2eHost, listen, type Respond, serveOpencode, waitFor } from "../harness/index.ts";
import { projectCli } from "../harness/project-cli.ts";

const PREFIX_HEADING = "## Governance Context (opencode-governance)";

/** One tool step, then the answer: two model steps per prompt. */
const oneToolThenAnswer: Respond = (req) =>
  req.messages.some((m) => m.role === "tool") ? { text: "Done." } : { toolCalls: [{ name: "bash", args: { command: "echo hi", description: "one step" } }] };

describe("governance reports when the host stops calling its prefix hook (real opencode)", () => {
  const { model, project } = e2eHost({ respond: oneToolThenAnswer, allowGovernanceGaps: true, serve: false });

  test("within two steps: one governance_gap line (prefix, host line and version), one toast, coverage in doctor and status", async () => {
    const serve = await serveOpencode(project, { env: { OPENCODE_GOVERNANCE_TEST_SKIP_HOOKS: "prefix" } });
    const bus = listen(serve.url, project.dir);
    try {
      const first = await serve.http.createSession();
      const before = model.requests.length;
      await serve.http.prompt(first.id, "Please say hi.");
      const steps = model.requests.slice(before).filter((r) => r.kind === "agent");
      expect(steps).toHaveLength(2);
      for (const r of steps) expect(r.system).not.toContain(PREFIX_HEADING);
      const gap = await waitFor(() => auditEvents(project.governanceDir).find((e) => e.type === "governance_gap"), "a governance_gap line");
      expect(gap).toMatchObject({ sessionId: first.id, missing: "prefix", host: 1 });
      expect(String(gap.hostVersion)).toMatch(/^1\.\d+\.\d+/);
      // The status-note hook still ran, the gate saw the tool call: only the prefix is missing.
      expect(
        auditEvents(project.governanceDir)
          .filter((e) => e.type === "governance_gap")
          .map((e) => e.missing),
      ).toEqual(["prefix"]);
      const toast = () => bus.events.filter((e) => e.type === "tui.toast.show" && String(e.properties?.message).includes("Governance is not reaching"));
      await waitFor(() => toast().length === 1 || undefined, "the toast on the event stream");

      // Another session: audited again, the user is not told twice by this process.
      const second = await serve.http.createSession();
      await serve.http.prompt(second.id, "Please say hi again.");
      await waitFor(() => auditEvents(project.governanceDir).find((e) => e.type === "governance_gap" && e.sessionId === second.id), "the second session's gap");
      await new Promise((r) => setTimeout(r, 300));
      expect(toast()).toHaveLength(1);
    } finally {
      bus.close();
      await serve.stop();
    }
    // Written at exit, read by the CLI.
    const doctor = await projectCli(project, ["doctor"]);
    expect(doctor.stdout).toMatch(/last session ses_\w+: prefix on 0\/2 steps, 1\/1 tool calls gated, 0\/0 children linked/);
    expect(doctor.stdout).toMatch(/governance gaps reported: 2/);
    const status = await projectCli(project, ["status"]);
    expect(status.stdout).toMatch(/prefix on 0\/2 steps/);
  });
});
