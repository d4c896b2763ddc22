/**
 * THE scenario table: what governance must do on any OpenCode host. Two runners read it:
 * - OpenCode 1, the real binary: each row names the end-to-end test that proves it (scripts/scenario-table.ts runs
 *   those tests under the real `opencode` and maps their results back to the rows);
 * - OpenCode 2, the contract double: test/host-contract/opencode-2-scenarios.test.ts runs one implementation per row
 *   (a row without one fails that file).
 * `npm run test:scenarios` prints both as one table. The OpenCode 2 column proves the adapter against the pinned
 * contract (docs/opencode-2.md), not against the host.
 */
export type Scenario = {
  readonly id: string;
  readonly title: string;
  /** The OpenCode 1 end-to-end test (real binary) that proves the row: file and exact test name. */
  readonly opencode1: { readonly file: string; readonly test: string };
};

export const SCENARIOS: readonly Scenario[] = [
  {
    id: "prefix-every-step",
    title: "governance prefix on every request of root and subagent",
    opencode1: { file: "test/e2e/governance-prefix.test.ts", test: "with the plugin: every agent step, including those after tool calls, carries the prefix" },
  },
  {
    id: "depth-halt",
    title: "spawn beyond max depth: EMERGENCY_HALT, nothing spawned",
    opencode1: {
      file: "test/e2e/delegation.test.ts",
      test: "coordinator → high → executor → verifier get depths 1, 2, 3; the fourth-level spawn is an EMERGENCY_HALT and spawns nothing",
    },
  },
  {
    id: "leaf-refusal",
    title: "a leaf's spawn and an off-list target are refused",
    opencode1: { file: "test/e2e/delegation.test.ts", test: "a leaf that calls task is blocked; a target outside the caller's allow-list is blocked" },
  },
  {
    id: "stop-ladder",
    title: "stop L1 → L2 → L3 on tool results, further calls refused, aborted",
    opencode1: {
      file: "test/e2e/stop-and-inject.test.ts",
      test: "a CLI stop climbs L1 (with the output) → L2 → L3 on the next tool results, blocks further calls, aborts the child, and tells the parent once",
    },
  },
  {
    id: "hard-stop",
    title: "hard stop at the deadline, recorded stopped once the host says idle",
    opencode1: {
      file: "test/e2e/stop-and-inject.test.ts",
      test: "a child whose model streams forever is hard-stopped within deadline + 2 s, recorded stopped only once OpenCode reports it idle",
    },
  },
  {
    id: "inject-fenced",
    title: "injected guidance fenced on the next tool result, once",
    opencode1: {
      file: "test/e2e/stop-and-inject.test.ts",
      test: "injects from separate CLI processes arrive together, in order, sanitized, in the next tool result; the one after carries none",
    },
  },
  {
    id: "escape-descendants",
    title: "Escape on the root: descendants stopped, all recorded interrupted",
    opencode1: {
      file: "test/e2e/stop-and-inject.test.ts",
      test: "Escape on the root while depth-2 and depth-3 descendants run leaves none running, all recorded interrupted",
    },
  },
  {
    id: "resume-2h",
    title: "resumed 2 h later: resume context before the prefix",
    opencode1: { file: "test/e2e/resume-and-compaction.test.ts", test: "interrupted root and child, resumed 2 h later" },
  },
  {
    id: "parent-notified",
    title: "the parent is told its subagent was stopped",
    opencode1: {
      file: "test/e2e/stop-and-inject.test.ts",
      test: "a CLI stop climbs L1 (with the output) → L2 → L3 on the next tool results, blocks further calls, aborts the child, and tells the parent once",
    },
  },
  {
    id: "compaction",
    title: "compaction carries anchors; the next request carries the reminder",
    opencode1: {
      file: "test/e2e/resume-and-compaction.test.ts",
      test: "the compaction request carries the anchors; the record says compacted; the next step has the reminder",
    },
  },
];
