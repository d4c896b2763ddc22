import { describe, expect, it } from "vitest";
import { protectedSummary } from "../../cli/confinement-view.ts";
import { protectedSet } from "../../governance/stop/protected-set.ts";

describe("doctor/status name what confinement protects (issue 39 walk: '5 protected paths read-only' named none)", () => {
  it("each path as the user knows it: relative to the project, ~ for the home folder, absolute elsewhere", () => {
    const set = protectedSet({
      projectDir: "/work/proj",
      keyDir: "/home/ann/.local/state/opencode-governance",
      userConfigDir: "/home/ann/.config/opencode",
      orgPolicyFile: "/etc/opencode-governance/policy.yaml",
      tmuxDir: "/tmp/tmux-1000",
    });
    expect(protectedSummary(set, "/work/proj", "/home/ann")).toBe(
      "hidden: ~/.local/state/opencode-governance, /tmp/tmux-1000; read-only: .opencode, opencode.json, opencode.jsonc, ~/.config/opencode, /etc/opencode-governance/policy.yaml",
    );
  });
});
