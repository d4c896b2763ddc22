import { describe, expect, it } from "vitest";
import { formatUse } from "../../../governance/budget/budget-notices.ts";
import { buildCapWarning, capUseLine } from "../../../governance/budget/spend-notices.ts";

describe("money for people: cents, unless the cap was set finer", () => {
  it("a limit carrying float noise (0.4 + 0.2) prints in cents, as the same cap did before its raise", () => {
    const use = {
      cost: 0.45600000000000007,
      tokens: 0,
      inputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      modelRequests: 38,
    };
    expect(capUseLine({ cap: "project.daily", use, limits: { cost: 0.6000000000000001 } })).toBe("project today: $0.46 of $0.60 cost (76%)");
    expect(capUseLine({ cap: "project.daily", use, limits: { cost: 0.4 } })).toBe("project today: $0.46 of $0.40 cost (114%)");
    expect(buildCapWarning([{ cap: "project.daily", key: "cost", used: 0.34800000000000003, limit: 0.4 }])).toContain("$0.35 of $0.40 cost used; $0.05 left.");
  });

  it("a cap set with more places keeps them (up to six)", () => {
    expect(formatUse("cost", 0.0004, 0.001)).toBe("$0.000 of $0.001 cost");
    expect(formatUse("cost", 0.1234567, 0.000001)).toBe("$0.123457 of $0.000001 cost");
  });
});
