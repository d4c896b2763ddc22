import { describe, expect, it } from "vitest";
import { buildHaltMessage, buildLeafBlockedMessage, buildLogOnlyNote, buildNotAllowedMessage } from "../../../governance/delegation/delegation-messages.ts";

describe("delegation messages", () => {
  it("halt: names the emergency, who tried what at which depth, the maximum, and what to do instead", () => {
    const text = buildHaltMessage({ callerAgent: "governance-executor", callerDepth: 3, targetAgent: "governance-builder", maxDepth: 3 });
    expect(text.split("\n")[0]).toBe("🚨 EMERGENCY_HALT: MAX_DELEGATION_DEPTH_EXCEEDED");
    expect(text).toContain("governance-executor (depth 3) tried to spawn governance-builder at depth 4; the maximum is 3.");
    expect(text).toContain("Do not retry or spawn another agent instead.");
    expect(text).toMatch(/Finish the work yourself, or return to your parent/);
  });

  it("leaf: says the caller cannot delegate and must do the work itself", () => {
    const text = buildLeafBlockedMessage({ callerAgent: "governance-builder", targetAgent: "general" });
    expect(text).toContain("LEAF_AGENT");
    expect(text).toContain("governance-builder is a leaf agent and cannot delegate (it tried to spawn general).");
    expect(text).toContain("Do the work yourself");
  });

  it("not allowed: lists the allowed targets, readable for globs and denials", () => {
    expect(buildNotAllowedMessage({ callerAgent: "a", targetAgent: "b", allowed: ["c", "d"] })).toContain("a may not delegate to b. Allowed targets: c, d.");
    expect(buildNotAllowedMessage({ callerAgent: "a", targetAgent: "b", allowed: ["*", "!b"] })).toContain("Allowed targets: any agent except b.");
    expect(buildNotAllowedMessage({ callerAgent: "a", targetAgent: "b", allowed: [] })).toMatch(/Allowed targets: none\.\nDo the work yourself/);
  });

  it("log-only: one line saying it would be blocked and why, and that it was allowed", () => {
    const text = buildLogOnlyNote({ kind: "max_depth", callerAgent: "a", targetAgent: "b" });
    expect(text).not.toContain("\n");
    expect(text).toMatch(/log-only: a → b would be blocked in enforce mode: it exceeds the maximum delegation depth\. Allowed and logged\./);
  });

  it("an unknown caller is named as such", () => {
    expect(buildLeafBlockedMessage({ callerAgent: null, targetAgent: "x" })).toContain("(unknown agent) is a leaf agent");
  });
});
