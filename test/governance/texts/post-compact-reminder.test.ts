import { describe, expect, it } from "vitest";
import type { Anchor } from "../../../governance/config/config.ts";
import type { AgentView } from "../../../governance/delegation/agent-view.ts";
import { buildPostCompactReminder as build, POST_COMPACT_HEADING, type PostCompactReminderInput } from "../../../governance/texts/post-compact-reminder.ts";

type Flat = Omit<PostCompactReminderInput, "who"> & AgentView;
const buildPostCompactReminder = ({ agent, role, level, depth, maxDepth, mayDelegateTo, ...rest }: Flat) =>
  build({ ...rest, who: { agent, role, level, depth, maxDepth, mayDelegateTo } });

const anchors: Anchor[] = [
  { id: "ANCHOR-002", text: "Must use ESM imports", priority: "high" },
  { id: "ANCHOR-003", text: "Prefers short commit messages", priority: "normal" },
  { id: "ANCHOR-001", text: "User prefers TypeScript over JavaScript", priority: "critical" },
];

const input: Flat = {
  language: { communication: "English", documents: "English" },
  phase: "implementation",
  recentActions: ["Read PLAN.md", "Created PLAN.md for phase 2", "Delegated to governance-builder for file creation", "Verified completion"],
  anchors,
  role: "delegating",
  agent: "governance-executor",
  level: 2,
  depth: 1,
  maxDepth: 3,
  mayDelegateTo: ["governance-builder", "governance-validator"],
};

describe("buildPostCompactReminder", () => {
  it("restates the language as MUST MAINTAIN right under the heading (S2-R02)", () => {
    const [heading, language] = buildPostCompactReminder(input).split("\n");
    expect(heading).toBe(POST_COMPACT_HEADING);
    expect(language).toBe("**Language:** English (communication and documents). MUST MAINTAIN.");
  });

  it("lists only the last three actions, oldest first (S2-R03)", () => {
    const text = buildPostCompactReminder(input);
    expect(text).toContain("**Last 3 actions:**\n1. Created PLAN.md for phase 2\n2. Delegated to governance-builder for file creation\n3. Verified completion");
    expect(text).not.toContain("Read PLAN.md");
  });

  it("lists critical anchors before high ones and leaves normal ones out (S2-R04)", () => {
    const text = buildPostCompactReminder(input);
    expect(text).toContain("- [ANCHOR-001] (critical) User prefers TypeScript over JavaScript\n- [ANCHOR-002] (high) Must use ESM imports");
    expect(text).not.toContain("ANCHOR-003");
  });

  it("reminds the agent of its place in the hierarchy (S2-R06) and recommends next steps (S2-R05)", () => {
    const text = buildPostCompactReminder(input);
    expect(text).toContain("**You:** governance-executor, DELEGATING (level 2).");
    expect(text).toContain("Max delegation depth: 3.");
    expect(text).toContain("**Recommended next:**");
    expect(text).toContain("Verify the last action completed");
  });

  it("for a leaf: cannot delegate; for a primary: check the todo list first", () => {
    expect(buildPostCompactReminder({ ...input, role: "leaf" })).toContain("you cannot delegate");
    expect(buildPostCompactReminder({ ...input, role: "primary" })).toContain("Check what the todo list still has open");
    expect(buildPostCompactReminder({ ...input, role: "primary" })).not.toContain("todoread");
  });

  it("says when the agent is at the depth limit, and lists targets when given", () => {
    expect(buildPostCompactReminder({ ...input, depth: 3 })).toContain("maximum delegation depth (3)");
    expect(buildPostCompactReminder({ ...input, depth: 1, mayDelegateTo: ["governance-builder"] })).toContain("Allowed targets: governance-builder.");
  });

  it("leaves out empty sections instead of printing empty headings", () => {
    const text = buildPostCompactReminder({ ...input, recentActions: [], anchors: [] });
    expect(text).not.toMatch(/Last \d action|Critical anchors/);
    expect(buildPostCompactReminder({ ...input, recentActions: ["only"] })).toContain("**Last 1 action:**\n1. only");
  });
});
