import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG, GovernanceConfig } from "../../../governance/config/config.ts";
import { decideSpawn } from "../../../governance/delegation/spawn-gate.ts";
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
