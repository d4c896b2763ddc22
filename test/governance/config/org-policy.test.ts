import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../governance/config/config.ts";
import { DEFAULT_ORG_POLICY_FILE, LOCKDOWN, loadOrgPolicy, orgFileDistrust, orgPolicyFile } from "../../../governance/config/org-policy.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function setup(org: string | null, project = "phase: x\n", mode = 0o644) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-org-"));
  dirs.push(root);
  const policy = path.join(root, "policy.yaml");
  if (org !== null) {
    fs.writeFileSync(policy, org);
    fs.chmodSync(policy, mode);
  }
  fs.mkdirSync(path.join(root, "p", ".opencode"), { recursive: true });
  const file = path.join(root, "p", ".opencode", "governance.yaml");
  fs.writeFileSync(file, project);
  const env = { HOME: root, XDG_CONFIG_HOME: path.join(root, "cfg"), OPENCODE_GOVERNANCE_POLICY: policy };
  return { file, env, policy };
}

describe("the organisation's policy file", () => {
  it("lives at a fixed system path unless one environment variable names another absolute path", () => {
    expect(orgPolicyFile({})).toBe(DEFAULT_ORG_POLICY_FILE);
    expect(orgPolicyFile({ OPENCODE_GOVERNANCE_POLICY: "relative.yaml" })).toBe(DEFAULT_ORG_POLICY_FILE);
    expect(orgPolicyFile({ OPENCODE_GOVERNANCE_POLICY: "/srv/p.yaml" })).toBe("/srv/p.yaml");
  });

  it("is trusted only when owned by root or the current user and writable by no group or other", () => {
    expect(orgFileDistrust({ uid: 0, mode: 0o100644 }, 1000)).toBeNull();
    expect(orgFileDistrust({ uid: 1000, mode: 0o100600 }, 1000)).toBeNull();
    expect(orgFileDistrust({ uid: 1001, mode: 0o100644 }, 1000)).toMatch(/owned by uid 1001/);
    expect(orgFileDistrust({ uid: 0, mode: 0o100664 }, 1000)).toMatch(/writable by its group or by others \(mode 664\)/);
    expect(orgFileDistrust({ uid: 0, mode: 0o100646 }, 1000)).toMatch(/mode 646/);
  });

  it("missing: no ceiling, no problem", async () => {
    const { env } = setup(null);
    expect(await loadOrgPolicy(env)).toMatchObject({ source: "none", settings: undefined, problems: [] });
  });

  it("its ceilings hold against the project's file", async () => {
    const { file, env } = setup(
      "delegation:\n  maxDepth: 2\nbudgets:\n  default:\n    toolCalls: 3\n",
      "delegation:\n  maxDepth: 9\nbudgets:\n  default: {}\n",
    );
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.config.delegation.maxDepth).toBe(2);
    expect(loaded.config.budgets.default).toEqual({ toolCalls: 3 });
    expect(loaded.policy.org.source).toBe("file");
    expect(loaded.policy.refused.map((r) => [r.path, r.ceilingLayer])).toEqual([
      ["delegation.maxDepth", "organisation"],
      ["budgets.default.toolCalls", "organisation"],
    ]);
  });

  it("a group-writable file is refused: at first start every limit is held at its default (lockdown), said loudly", async () => {
    const { file, env } = setup("delegation:\n  maxDepth: 2\n", "delegation:\n  maxDepth: 9\nloops:\n  enabled: false\n", 0o664);
    const loaded = await loadConfig(file, undefined, env);
    expect(loaded.policy.org.source).toBe("lockdown");
    expect(loaded.config.delegation.maxDepth).toBe(3);
    expect(loaded.config.loops.enabled).toBe(true);
    expect(loaded.problems[0]?.message).toMatch(/writable by its group or by others.*NO LIMIT MAY BE LOOSENED/);
  });

  it("a broken edit keeps the last good policy, never no ceiling", async () => {
    const { file, env, policy } = setup("delegation:\n  maxDepth: 1\n", "delegation:\n  maxDepth: 9\n");
    const good = await loadConfig(file, undefined, env);
    expect(good.config.delegation.maxDepth).toBe(1);
    fs.writeFileSync(policy, "delegation: [unclosed\n");
    const broken = await loadConfig(file, good.lastGood, env);
    expect(broken.policy.org.source).toBe("last-good");
    expect(broken.config.delegation.maxDepth).toBe(1);
    expect(broken.problems[0]?.message).toMatch(/not valid YAML.*the last good organisation policy stays in force/);
    // Without a last good one: lockdown, the defaults hold.
    const first = await loadConfig(file, undefined, env);
    expect(first.policy.org.source).toBe("lockdown");
    expect(first.config.delegation.maxDepth).toBe(LOCKDOWN.delegation?.maxDepth);
  });

  it("an unknown key makes the whole file invalid (a typo must not silently drop a ceiling)", async () => {
    const { env } = setup("delegation:\n  maxDepht: 1\n");
    expect((await loadOrgPolicy(env)).source).toBe("lockdown");
  });

  it("removed or loosened while a process runs: the last good one stays; removed after a lockdown: the lockdown stays (issue 41 §3)", async () => {
    const { file, env, policy } = setup("delegation:\n  maxDepth: 1\n", "delegation:\n  maxDepth: 3\n");
    const first = await loadConfig(file, undefined, env);
    expect(first.config.delegation.maxDepth).toBe(1);
    fs.writeFileSync(policy, "delegation:\n  maxDepth: 5\n");
    const loosened = await loadConfig(file, first.lastGood, env);
    expect(loosened.config.delegation.maxDepth).toBe(1);
    expect(loosened.kept).toEqual([{ layer: "organisation", file: policy, why: "loosened", paths: ["delegation.maxDepth"] }]);
    fs.rmSync(policy);
    const removed = await loadConfig(file, loosened.lastGood, env);
    expect(removed.config.delegation.maxDepth).toBe(1);
    expect(removed.kept.map((k) => k.why)).toEqual(["missing"]);
    expect(removed.policy.org.source).toBe("last-good");

    fs.writeFileSync(policy, "delegation: [broken\n");
    fs.chmodSync(policy, 0o644);
    const locked = await loadConfig(file, undefined, env);
    expect(locked.policy.org.source).toBe("lockdown");
    fs.rmSync(policy);
    const stillLocked = await loadConfig(file, locked.lastGood, env);
    expect(stillLocked.policy.org.source).toBe("lockdown");
    expect(stillLocked.config.delegation.maxDepth).toBe(LOCKDOWN.delegation?.maxDepth);
  });
});
