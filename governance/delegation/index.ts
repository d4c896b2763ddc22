export * as DelegationPolicy from "./delegation-policy.ts";
export * as SpawnGate from "./spawn-gate.ts";
export * as AgentView from "./agent-view.ts";
export * as Descendants from "./descendants.ts";
export * as GovernanceToolAccess from "./governance-tool-access.ts";
