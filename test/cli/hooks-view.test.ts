import { describe, expect, it } from "vitest";
import { HooksConfig } from "../../governance/config/hooks-config.ts";
import { hookCount, hookLines } from "../../cli/hooks-view.ts";

describe("how status --explain and doctor name the user's hooks", () => {
  const hooks = HooksConfig.parse({
    session_stopped: [{ command: "notify-send 'stopped' \"$(jq -r .text)\"" }, { url: "https://hooks.slack.com/services/T0/B0/SECRET-TOKEN" }],
    budget_exceeded: { command: "TOKEN=sk-secret-value /home/me/bin/page-me.sh --urgent" },
    governance_gap: { url: "https://user:pass@chat.example.com:8443/hook?key=SECRET" },
  });

  it("each event → the program (no folder, no NAME=value) or the webhook's host, never the rest", () => {
    const lines = hookLines(hooks);
    expect(lines).toEqual([
      "session_stopped → command notify-send …, webhook hooks.slack.com",
      "budget_exceeded → command page-me.sh …",
      "governance_gap → webhook chat.example.com:8443",
    ]);
    expect(lines.join("\n")).not.toMatch(/SECRET|sk-secret|pass|\/home\/me|jq/);
  });

  it("doctor's count; none when the file has no hooks", () => {
    expect(hookCount(hooks)).toBe("4 actions on 3 events");
    expect(hookCount(HooksConfig.parse({ session_stopped: { command: "true" } }))).toBe("1 action on 1 event");
    expect(hookCount({})).toBeNull();
    expect(hookLines({})).toEqual([]);
  });
});
