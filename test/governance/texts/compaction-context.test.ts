import { describe, expect, it } from "vitest";
import type { AgentView } from "../../../governance/delegation/agent-view.ts";
import { buildCompactionContext as build, type CompactionContextInput } from "../../../governance/texts/compaction-context.ts";

type Flat = Omit<CompactionContextInput, "who"> & AgentView;
const buildCompactionContext = ({ agent, role, level, depth, maxDepth, mayDelegateTo, ...rest }: Flat) =>
  build({ ...rest, who: { agent, role, level, depth, maxDepth, mayDelegateTo } });

const input: Flat = {
  language: { communication: "French", documents: "English" },
  phase: "planning",
  anchors: [
    { id: "A-normal", text: "Keep commits small", priority: "normal" },
    { id: "A-crit", text: "Never touch prod config", priority: "critical" },
  ],
  recentActions: ["one", "two", "three", "four"],
  agent: "governance-coordinator",
  role: "primary",
  level: 1,
  depth: 0,
  maxDepth: 3,
  mayDelegateTo: ["governance-planner"],
};

describe("buildCompactionContext", () => {
  it("opens by telling the summarizer to keep the lines verbatim", () => {
    expect(buildCompactionContext(input)[0]).toMatch(/VERBATIM/);
  });

  it("carries language, hierarchy, phase, all anchors (critical first) and the last three actions, one per line", () => {
    const lines = buildCompactionContext(input);
    expect(lines).toContain("Language: French (communication), English (documents). MUST MAINTAIN.");
    expect(lines.find((l) => l.startsWith("Agent:"))).toContain("governance-coordinator, PRIMARY (level 1). NEVER edit files");
    expect(lines).toContain("Phase: planning");
    const anchorLines = lines.filter((l) => l.startsWith("Anchor"));
    expect(anchorLines).toEqual(["Anchor [A-crit] (critical): Never touch prod config", "Anchor [A-normal] (normal): Keep commits small"]);
    expect(lines.filter((l) => l.startsWith("Recent action"))).toEqual([
      "Recent action 1 of 3: two",
      "Recent action 2 of 3: three",
      "Recent action 3 of 3: four",
    ]);
    expect(lines.every((l) => !l.includes("\n"))).toBe(true);
  });

  it("has no anchor or action lines when there are none", () => {
    const lines = buildCompactionContext({ ...input, anchors: [], recentActions: [] });
    expect(lines).toHaveLength(4);
  });
});
