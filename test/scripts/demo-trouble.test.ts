import { describe, expect, test } from "vitest";
import { sceneTrouble } from "../../scripts/demo/stage.ts";

/** ANSI colours off: the lines as a person reads them. */
const plain = (lines: string[]) => lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));

/**
 * Issue 39: a failed demo scene printed "The plugin did not load in OpenCode" two lines after `plugin_started`; the
 * cause was a `config_problem` in the audit log. A failing scene now prints what the plugin recorded during it.
 */
describe("what a failed demo scene prints under it", () => {
  test("the config problem with its file, line and column; a loop notice; a refusal — never a guess", () => {
    const lines = plain(
      sceneTrouble([
        { at: 1, type: "plugin_started", host: 1 },
        { at: 2, type: "config_problem", file: "/p/.opencode/governance.yaml", message: "Map keys must be unique", line: 47, column: 3 },
        { at: 3, type: "loop_detected", sessionId: "ses_abcdef123456", stage: "stop", tool: "read" },
        { at: 4, type: "tool_blocked", sessionId: "ses_abcdef123456", tool: "task", reason: "session_stopped" },
      ]),
    );
    expect(lines[0]).toBe("the audit log during this scene (3 refusal(s), problem(s) or error(s)):");
    expect(lines[1]).toContain('audit config_problem  file="/p/.opencode/governance.yaml" message="Map keys must be unique" line=47 column=3');
    expect(lines[2]).toMatch(/^ {2}audit loop_detected \S+ stage="stop" tool="read"$/);
    expect(lines[3]).toMatch(/reason="session_stopped"/);
    expect(lines.join("\n")).not.toContain("plugin_started");
    expect(lines.join("\n")).not.toMatch(/did not load/);
  });

  test("nothing recorded: says so; more than eight: the rest counted", () => {
    expect(plain(sceneTrouble([{ at: 1, type: "session_created" }]))).toEqual(["the audit log recorded no refusal, problem or hook error during this scene"]);
    const many = Array.from({ length: 11 }, (_, i) => ({ at: i, type: "control_refused", surface: "key" }));
    const lines = plain(sceneTrouble(many));
    expect(lines).toHaveLength(1 + 8 + 1);
    expect(lines.at(-1)).toBe("  … 3 more in .opencode/governance/audit.log");
  });
});
