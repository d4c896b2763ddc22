import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadKey } from "../../governance/storage/directive-signing.ts";
import { projectLedgerDir, SpendLedger, userLedgerDir } from "../../governance/storage/spend-ledger.ts";
import { localTimeZone, spendWindow } from "../../governance/time/spend-window.ts";
import { type CliProject, cliProjects } from "./cli-project.ts";
import { runCli } from "./run-cli.ts";

/** `budget --project|--user` and `status` show today's and this week's spend against the caps; `--add` raises today's (issue 44). */
const newProject = cliProjects();
async function project(yaml: string): Promise<CliProject> {
  const p = await newProject();
  await mkdir(join(p.dir, ".opencode"), { recursive: true });
  await writeFile(join(p.dir, ".opencode", "governance.yaml"), yaml);
  return p;
}

const today = () => spendWindow(Date.now(), localTimeZone()).day;

describe("budget --project / --user", () => {
  it("shows the spend of every OpenCode process against the cap, and a raise of today's cap counts at once", async () => {
    const p = await project("budgets:\n  project:\n    daily: { cost: 1 }\n    weekly: { outputTokens: 10000 }\n");
    const dir = projectLedgerDir(p.dir);
    new SpendLedger(dir, null).add(today(), Date.now(), { cost: 0.5, modelRequests: 2, outputTokens: 1000, tokens: 1200 });
    new SpendLedger(dir, null).add(today(), Date.now(), { cost: 0.25, modelRequests: 1 });
    const shown = await runCli(["budget", "--project"], { cwd: p.dir });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("project today: $0.75 of $1.00 cost (75%)");
    expect(shown.stdout).toContain("project this week: 1000 of 10000 output tokens (10%)");

    const raised = await runCli(["budget", "--project", "--add", "cost=2", "--add", "cost=0.5"], { cwd: p.dir });
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stdout).toContain("project's cap for today raised: cost +2.5");
    const json = JSON.parse((await runCli(["budget", "--project", "--json"], { cwd: p.dir })).stdout);
    expect(json.caps.find((x: { cap: string }) => x.cap === "project.daily")).toMatchObject({ limits: { cost: 3.5 }, use: { cost: 0.75, modelRequests: 3 } });
    // The raise is a signed line of the project's ledger: a plugin reading the ledger with the user's key counts it.
    const key = loadKey();
    expect(key.ok && new SpendLedger(dir, key.key).sum([today()]).raises.map((r) => r.add)).toEqual([{ cost: 2.5 }]);

    const status = await runCli(["status"], { cwd: p.dir });
    expect(status.stdout).toMatch(/spend: \d{4}-\d{2}-\d{2}, week \d{4}-W\d{2}/);
    expect(status.stdout).toContain("project today: $0.75 of $3.50 cost (21%)");
    expect(JSON.parse((await runCli(["status", "--json"], { cwd: p.dir })).stdout).spend.caps).toHaveLength(4);
  });

  it("--user reads the user's ledger beside the key; a tool-call raise is no cap over time", async () => {
    const p = await project("budgets:\n  user:\n    weekly: { cost: 50 }\n");
    const env = { XDG_STATE_HOME: join(p.sandbox, "state") };
    new SpendLedger(userLedgerDir(env), null).add(today(), Date.now(), { cost: 12 });
    const shown = await runCli(["budget", "--user"], { cwd: p.dir, env });
    expect(shown.stdout).toContain("you this week (all projects): $12.00 of $50.00 cost (24%)");
    const wrong = await runCli(["budget", "--user", "--add", "toolCalls=5"], { cwd: p.dir, env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("a cap over time has no toolCalls");
    const week = await runCli(["budget", "--user", "--week", "--add", "cost=10"], { cwd: p.dir, env });
    expect(week.stdout).toContain("user's cap for this week raised: cost +10");
    expect((await runCli(["budget", "--user"], { cwd: p.dir, env })).stdout).toContain("$12.00 of $60.00 cost");
  });

  it("money is shown in cents and stated without float noise after a raise; --explain names the raise and only a cap's keys", async () => {
    const p = await project("budgets:\n  project:\n    daily: { cost: 0.4 }\n");
    const ledger = new SpendLedger(projectLedgerDir(p.dir), null);
    for (let i = 0; i < 38; i++) ledger.add(today(), Date.now(), { cost: 0.012, modelRequests: 1 }); // 0.45600000000000007 summed
    expect((await runCli(["budget", "--project", "--add", "cost=0.2"], { cwd: p.dir })).code).toBe(0);
    const shown = await runCli(["budget", "--project"], { cwd: p.dir });
    expect(shown.stdout).toContain("project today: $0.46 of $0.60 cost (76%)");
    const json = JSON.parse((await runCli(["budget", "--project", "--json"], { cwd: p.dir })).stdout);
    expect(json.caps.find((x: { cap: string }) => x.cap === "project.daily")).toMatchObject({ limits: { cost: 0.6 }, use: { cost: 0.456 } });
    expect((await runCli(["status"], { cwd: p.dir })).stdout).toContain("project today: $0.46 of $0.60 cost (76%)");

    const explain = await runCli(["status", "--explain"], { cwd: p.dir });
    expect(explain.stdout).toMatch(/budgets\.project\.daily\.cost\s+0\.4, raised today to 0\.6\s+project/);
    expect(explain.stdout).toMatch(/budgets\.project\.daily\.modelRequests\s+no limit/);
    expect(explain.stdout).not.toMatch(/budgets\.(project|user)\.(daily|weekly)\.(activeTime|toolCalls)/);
    const settings = JSON.parse((await runCli(["status", "--explain", "--json"], { cwd: p.dir })).stdout).settings;
    expect(settings).toContainEqual({ path: "budgets.project.daily.cost", value: 0.4, from: "project", raisedTo: 0.6 });
  });
});
