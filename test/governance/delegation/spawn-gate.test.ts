import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, GovernanceConfig } from "../../../governance/config/config.ts";
import { decideSpawn } from "../../../governance/delegation/spawn-gate.ts";
import { type ContinuedSession, continuationOf } from "../../../governance/delegation/delegation-policy.ts";
import { makeRecord } from "../fixtures/records.ts";

const caller = (agent: string, depth: number) =>
  makeRecord({ sessionId: "ses_caller00000000000000000001", agent, depth, parentId: depth > 0 ? "ses_root0000000000000000000001" : null });
const logOnly = { ...DEFAULT_CONFIG, enforcement: "log-only" as const };

describe("decideSpawn: what happens to a task call, by policy and enforcement", () => {
  it.each([
    // name, caller, depth, target, config, decision kind, audit, violations counted, toast
    ["allowed: nothing recorded", "governance-coordinator", 0, "governance-executor", DEFAULT_CONFIG, "allowed", null, 0, null],
    ["leaf caller: blocked", "governance-builder", 2, "governance-validator", DEFAULT_CONFIG, "blocked", "delegation_blocked", 1, "warning"],
    ["outside the allow-list: blocked", "governance-coordinator", 0, "governance-builder", DEFAULT_CONFIG, "blocked", "delegation_blocked", 1, "warning"],
    ["beyond the max depth: halted", "governance-executor", 3, "governance-builder", DEFAULT_CONFIG, "halted", "emergency_halt", 1, "error"],
    ["log-only leaf: allowed with a note, counted", "governance-builder", 2, "governance-validator", logOnly, "allowed", "delegation_blocked", 1, null],
    ["log-only depth: allowed with a note, counted", "governance-executor", 3, "governance-builder", logOnly, "allowed", "emergency_halt", 1, null],
  ] as const)("%s", (_name, agent, depth, target, config, kind, auditType, violations, toast) => {
    const step = decideSpawn(caller(agent, depth), { targetAgent: target, config });
    expect(step.decision.kind).toBe(kind);
    expect(step.next?.counters.violations).toBe(violations);
    const audits = step.effects.filter((e) => e.type === "audit");
    expect(audits.map((e) => (e.type === "audit" ? e.event : ""))).toEqual(auditType ? [auditType] : []);
    const toasts = step.effects.filter((e) => e.type === "toast");
    expect(toasts.map((e) => (e.type === "toast" ? e.variant : ""))).toEqual(toast ? [toast] : []);
    if (step.decision.kind === "allowed") expect(step.decision.note === null).toBe(auditType === null);
    else expect(step.decision.message).toMatch(kind === "halted" ? /EMERGENCY_HALT/ : /DELEGATION BLOCKED/);
  });

  it("a caller without a record (not seen yet) is decided as a root, and nothing is counted on no record", () => {
    // Its agent is not known either: by default that caller is a leaf (decision 0024)…
    const refused = decideSpawn(undefined, { targetAgent: "governance-executor", config: DEFAULT_CONFIG });
    expect(refused.decision).toMatchObject({ kind: "blocked" });
    expect(refused.next).toBeUndefined();
    // …and with a permissive default role, it is placed as a root.
    const open = GovernanceConfig.parse({ defaultRole: { role: "delegating", mayDelegateTo: ["*"] } });
    const step = decideSpawn(undefined, { targetAgent: "governance-executor", config: open });
    expect(step.decision).toMatchObject({ kind: "allowed", childDepth: 1 });
    expect(step.next).toBeUndefined();
  });
});

describe("decideSpawn: an agent the config does not name (decision 0030)", () => {
  it("is blocked with the lines to add, in the model's text, the audit line and the toast", () => {
    const hostAgent = (name: string) =>
      name === "newcomer" ? { name, mode: "primary", permission: { task: "allow" }, source: ".opencode/agent/newcomer.md" } : undefined;
    const step = decideSpawn(caller("newcomer", 0), { targetAgent: "worker", config: DEFAULT_CONFIG, hostAgent });
    const add = ["  # from .opencode/agent/newcomer.md: mode primary, task allow", "  newcomer:", "    role: primary", '    mayDelegateTo: ["*"]'];
    const said = ["`newcomer` is not named in .opencode/governance.yaml, so it may not delegate; to let it, add:", ...add].join("\n");
    expect(step.decision.kind === "blocked" && step.decision.message).toContain(said);
    expect(step.decision.kind === "blocked" && step.decision.message).not.toContain("parent");
    expect(step.effects).toContainEqual({ type: "toast", message: said, variant: "warning" });
    expect(step.effects.find((e) => e.type === "audit")).toMatchObject({ event: "delegation_blocked", data: { kind: "not_named", add } });
  });
});

describe("decideSpawn: a `task_id` continues only the caller's own subagent, and not one a stop ended", () => {
  const CALLER = "ses_caller00000000000000000001";
  const OWN = "ses_own0000000000000000000001";
  const coordinator = caller("governance-coordinator", 0);
  const decide = (continues: ContinuedSession, config = DEFAULT_CONFIG) => decideSpawn(coordinator, { targetAgent: "governance-executor", continues, config });

  it.each([
    ["its own subagent, finished", { sessionId: OWN, parentId: CALLER, control: "completed" }, "allowed", null],
    ["its own subagent, interrupted (Escape)", { sessionId: OWN, parentId: CALLER, control: "active" }, "allowed", null],
    ["a session the host does not know (it creates a new one)", { sessionId: OWN, parentId: undefined, control: null }, "allowed", null],
    ["a root session (its own, another's)", { sessionId: "ses_root0000000000000000000009", parentId: null, control: "active" }, "blocked", "not_own_subagent"],
    ["another session's subagent", { sessionId: OWN, parentId: "ses_other000000000000000000001", control: "completed" }, "blocked", "not_own_subagent"],
    ["itself", { sessionId: CALLER, parentId: "ses_root0000000000000000000001", control: "active" }, "blocked", "not_own_subagent"],
    ["its own subagent, stopped", { sessionId: OWN, parentId: CALLER, control: "stopped" }, "blocked", "stopped_subagent"],
    ["a stopped session the host does not know any more", { sessionId: OWN, parentId: undefined, control: "stopped" }, "blocked", "stopped_subagent"],
  ] as const)("%s: %s", (_name, continues, kind, refusal) => {
    const step = decide(continues);
    expect(step.decision.kind).toBe(kind);
    const audit = step.effects.find((e) => e.type === "audit");
    if (!refusal) return expect(audit).toBeUndefined();
    expect(audit).toMatchObject({ event: "delegation_blocked", data: { kind: refusal, continues: continues.sessionId, enforced: true } });
    expect(step.decision.kind === "blocked" && step.decision.message).toContain(continues.sessionId);
    expect(step.next?.counters.violations).toBe(1);
  });

  it("a task_id naming a stopped subagent OpenCode deleted, which the host no longer reports, is a plain spawn (decision 0051)", () => {
    const end = (how: "deleted" | "completed") => ({ at: 1, how, detail: null });
    const deleted = { parentId: CALLER, control: "stopped" as const, end: end("deleted") };
    expect(continuationOf(OWN, undefined, deleted)).toBeUndefined();
    // The host still reports it, or it was only stopped (the host gave no answer: unknown and silent look alike).
    expect(decide(continuationOf(OWN, { parentId: CALLER }, deleted)!).decision.kind).toBe("blocked");
    expect(decide(continuationOf(OWN, undefined, { ...deleted, end: end("completed") })!).decision.kind).toBe("blocked");
    expect(decide(continuationOf(OWN, undefined, { ...deleted, end: null })!).decision.kind).toBe("blocked");
  });

  it("a caller without a record owns no session: a root it names is not its subagent", () => {
    const open = GovernanceConfig.parse({ defaultRole: { role: "delegating", mayDelegateTo: ["*"] } });
    const step = decideSpawn(undefined, { targetAgent: "general", continues: { sessionId: OWN, parentId: null, control: "active" }, config: open });
    expect(step.decision).toMatchObject({ kind: "blocked", message: expect.stringContaining("NOT_YOUR_SUBAGENT") });
  });

  it("log-only: the continuation goes ahead with a note, and is audited", () => {
    const step = decide({ sessionId: OWN, parentId: null, control: "active" }, logOnly);
    expect(step.decision).toMatchObject({ kind: "allowed", note: expect.stringContaining("not the caller's subagent") });
    expect(step.effects.find((e) => e.type === "audit")).toMatchObject({ data: { kind: "not_own_subagent", enforced: false } });
  });
});
