import { describe, expect, test } from "vitest";
import { coverageNotice } from "../../../governance/texts/coverage-notice.ts";

describe("the notice a governance gap gives the user", () => {
  test("names what is missing and the host, and the command that says more", () => {
    expect(coverageNotice("prefix", { line: 2, version: "2.0.15" })).toBe(
      "Governance is not reaching this session (the governance prefix missing on OpenCode 2 2.0.15): run `opencode-governance doctor`.",
    );
    expect(coverageNotice("child_link", { line: 1, version: null })).toContain("child links missing on OpenCode 1)");
  });

  test("a command outside the sandbox says what happened and that later commands are still confined", () => {
    const text = coverageNotice("sandbox", { line: 1, version: "1.18.33" });
    expect(text).toContain("ran outside governance's sandbox (OpenCode 1 1.18.33");
    expect(text).toContain("later commands are confined another way");
  });
});
