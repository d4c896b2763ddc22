import { describe, expect, it } from "vitest";
import { parseAmounts } from "../../../governance/stop/budget-request.ts";

/** `opencode-governance budget <id> --add key=value …`: the amounts a raise adds, validated like the config (issue 29). */
describe("parseAmounts", () => {
  it.each([
    [["toolCalls=10"], { toolCalls: 10 }],
    [["cost=1.5", "tokens=20000"], { cost: 1.5, tokens: 20000 }],
    [["activeTime=10m"], { activeTime: 600_000 }],
    [[" modelRequests=3 "], { modelRequests: 3 }],
    [["toolCalls=5", "toolCalls=7"], { toolCalls: 12 }],
    // A repeated key adds up, a duration like a count (it kept only the last one).
    [["activeTime=5m", "activeTime=10m"], { activeTime: 900_000 }],
  ])("%j → %j", (items, add) => {
    expect(parseAmounts(items)).toEqual({ ok: true, add });
  });

  it.each([
    [[], "nothing to add"],
    [["toolCalls"], "--add takes key=value"],
    [["toolCalls=ten"], "toolCalls: not a number"],
    [["toolCalls=Infinity"], "toolCalls: not a number"],
    [["coins=3"], 'unknown budget "coins"'],
    [["activeTime=soon"], "activeTime:"],
    [[`toolCalls=${"9".repeat(41)}`], "--add takes key=value"],
  ])("%j is refused: %s", (items, reason) => {
    const res = parseAmounts(items);
    expect(res.ok).toBe(false);
    expect(res.ok ? "" : res.reason).toContain(reason);
  });

  it("amounts outside the config's bounds are refused with the schema's words", () => {
    const res = parseAmounts(["toolCalls=-5"]);
    expect(res.ok).toBe(false);
  });
});
