import { describe, expect, it } from "vitest";
import { ConcurrencyConfig } from "../../../governance/config/budget-config.ts";
import { decideConcurrency } from "../../../governance/budget/concurrency.ts";

describe("concurrency refusal: the audit says what the text says (issue 28 §2)", () => {
  it("perProject: 2 running and 1 starting are 3 in the text, the audit and the toast", () => {
    const d = decideConcurrency({
      parentRunning: [],
      projectRunning: 3,
      projectSample: [
        { sessionId: "ses_a0000000000000000000000001", agent: "general" },
        { sessionId: "ses_b0000000000000000000000001", agent: "general" },
      ],
      config: ConcurrencyConfig.parse({ perProject: 3 }),
      targetAgent: "general",
    });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("The project already has 3 running subagents");
    const audit = d.effects.find((e) => e.type === "audit") as { data: Record<string, unknown> };
    expect(audit.data).toMatchObject({ scope: "project", limit: 3, running: 3 });
    expect(d.effects.find((e) => e.type === "toast")).toMatchObject({ message: expect.stringContaining("3 subagents already running") });
  });
  it("a count above the limit (the limit was lowered) is said as it is", () => {
    const running = [1, 2, 3, 4, 5].map((i) => ({ sessionId: `ses_c000000000000000000000000${i}`, agent: "general" }));
    const d = decideConcurrency({
      parentRunning: running,
      projectRunning: 5,
      projectSample: running,
      config: ConcurrencyConfig.parse({ perParent: 2 }),
      targetAgent: "x",
    });
    if (d.ok) throw new Error("expected a refusal");
    expect(d.message).toContain("You already have 5 running subagents, and at most 2 are allowed at once");
  });
});
