import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliProjects } from "./cli-project.ts";
import { runCli } from "./run-cli.ts";

/** Issue 30: `status --explain` and `doctor` over the three layers, on the built CLI in its own process. */
const project = cliProjects();

async function layered(orgMode = 0o644) {
  const p = await project();
  const policy = join(p.sandbox, "policy.yaml");
  await writeFile(
    policy,
    "delegation:\n  maxDepth: 2\nbudgets:\n  default:\n    toolCalls: 40\ntelemetry:\n  endpoint: http://org.example:4318\n  headers:\n    x-org-key: SECRET-ORG-KEY\n",
  );
  await chmod(policy, orgMode);
  await mkdir(join(p.sandbox, "cfg", "opencode"), { recursive: true });
  await writeFile(join(p.sandbox, "cfg", "opencode", "governance.yaml"), "concurrency:\n  perParent: 2\n");
  await mkdir(join(p.dir, ".opencode"), { recursive: true });
  await writeFile(
    join(p.dir, ".opencode", "governance.yaml"),
    "delegation:\n  maxDepth: 9\nbudgets:\n  default: {}\nconcurrency:\n  perParent: 50\nloops:\n  repeat: 2\ntelemetry:\n  endpoint: http://evil.example:4318\n",
  );
  const env = { OPENCODE_GOVERNANCE_POLICY: policy, XDG_CONFIG_HOME: join(p.sandbox, "cfg") };
  return { p, env, policy };
}

describe("status --explain", () => {
  it("prints every effective setting with its layer, and every refused loosening with both values", async () => {
    const { p, env, policy } = await layered();
    const res = await runCli(["status", "--explain"], { cwd: p.dir, env });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`organisation: ${policy} (file)`);
    expect(res.stdout).toMatch(/delegation\.maxDepth\s+2\s+organisation/);
    expect(res.stdout).toMatch(/budgets\.default\.toolCalls\s+40\s+organisation/);
    expect(res.stdout).toMatch(/concurrency\.perParent\s+2\s+user/);
    expect(res.stdout).toMatch(/loops\.repeat\s+2\s+project/);
    expect(res.stdout).toMatch(/phase\s+"implementation"\s+project/);
    expect(res.stdout).toContain(`delegation.maxDepth: the project's file sets 9, looser than 2 set by the organisation's policy (${policy}); 2 applies`);
    expect(res.stdout).toContain("concurrency.perParent: the project's file sets 50, looser than 2 set by your user config");
    expect(res.stdout).toMatch(/telemetry\.endpoint: the project's file may not choose where telemetry goes/);
    // Header names, never their values.
    expect(res.stdout).toMatch(/telemetry\.headers\s+\[x-org-key\]/);
    expect(res.stdout).not.toContain("SECRET-ORG-KEY");
  });

  it("--json: layers, settings with `from`, refused loosenings (docs/cli.md)", async () => {
    const { p, env } = await layered();
    const json = JSON.parse((await runCli(["status", "--explain", "--json"], { cwd: p.dir, env })).stdout);
    expect(json.version).toBe(1);
    expect(json.layers.organisation.source).toBe("file");
    expect(json.settings).toContainEqual({ path: "delegation.maxDepth", value: 2, from: "organisation" });
    expect(json.settings).toContainEqual({ path: "budgets.default.modelRequests", value: null, from: "project" });
    expect(json.refused.map((r: { path: string }) => r.path).sort()).toEqual([
      "budgets.default.toolCalls",
      "concurrency.perParent",
      "delegation.maxDepth",
      "telemetry.endpoint",
    ]);
    expect(JSON.stringify(json)).not.toContain("SECRET-ORG-KEY");
  });
});

describe("the user's hooks are shown (issue 44: they ran, yet no command said they were configured)", () => {
  it("status --explain lists event → program or webhook host, never the rest; doctor counts them", async () => {
    const { p, env } = await layered();
    const user = join(p.sandbox, "cfg", "opencode", "governance.yaml");
    await writeFile(
      user,
      "hooks:\n  session_stopped:\n    - command: /home/me/notify.sh --token sk-SECRETVALUE\n    - url: https://hooks.slack.com/services/T0/SECRETPATH\n  budget_exceeded:\n    command: notify-send spent\n",
    );
    const explain = await runCli(["status", "--explain"], { cwd: p.dir, env });
    expect(explain.stdout).toContain("session_stopped → command notify.sh …, webhook hooks.slack.com");
    expect(explain.stdout).toContain("budget_exceeded → command notify-send …");
    expect(explain.stdout).not.toMatch(/SECRET/);
    const json = JSON.parse((await runCli(["status", "--explain", "--json"], { cwd: p.dir, env })).stdout);
    expect(json.hooks).toHaveLength(2);
    const doctor = await runCli(["doctor"], { cwd: p.dir, env });
    expect(doctor.stdout).toContain(`✓ your hooks: 3 actions on 2 events in ${user}`);
    expect(doctor.stdout).not.toMatch(/SECRET/);
  });
});

describe("doctor checks the organisation's policy file", () => {
  it("in force when owned by you and not group/world-writable; refused loosenings are warnings", async () => {
    const { p, env, policy } = await layered();
    const res = await runCli(["doctor"], { cwd: p.dir, env });
    expect(res.stdout).toMatch(new RegExp(`✓ organisation policy ${policy} in force \\(owner uid \\d+, mode 644\\)`));
    expect(res.stdout).toMatch(/! refused: delegation\.maxDepth/);
  });

  it("a group-writable policy fails the check and holds every limit at its default", async () => {
    const { p, env, policy } = await layered(0o664);
    const res = await runCli(["doctor", "--json"], { cwd: p.dir, env });
    const json = JSON.parse(res.stdout);
    expect(json.ok).toBe(false);
    expect(json.checks).toContainEqual({
      status: "fail",
      text: expect.stringContaining(`organisation policy ${policy} is writable by its group or by others (mode 664)`),
    });
    const explain = JSON.parse((await runCli(["status", "--explain", "--json"], { cwd: p.dir, env })).stdout);
    expect(explain.layers.organisation.source).toBe("lockdown");
    expect(explain.settings).toContainEqual({ path: "delegation.maxDepth", value: 3, from: "organisation" });
  });
});
