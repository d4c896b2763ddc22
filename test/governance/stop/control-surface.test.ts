import { describe, expect, it } from "vitest";
import { controlSurfaces, surfaceNamed, surfaceRefusal } from "../../../governance/stop/control-surface.ts";

const s = controlSurfaces({
  projectDir: "/home/u/proj",
  keyDir: "/home/u/.local/state/opencode-governance",
  stateDir: "/home/u/proj/.opencode/governance",
  configFile: "/home/u/proj/.opencode/governance.yaml",
  realPaths: ["/data/u/state/opencode-governance"],
});
const bash = (command: string) => surfaceNamed("bash", { command, description: "x" }, s);

describe("which tool calls name a control surface (issue 27)", () => {
  it.each([
    ["cat ~/.local/state/opencode-governance/queue-key", "key"],
    ['cat "$XDG_STATE_HOME/opencode-governance/queue-key"', "key"],
    ["cp /data/u/state/opencode-governance/x /tmp", "key"],
    ["echo '{}' > .opencode/governance/queues/ses_x/1.json", "state"],
    ["cd .opencode && sed -i s/stopping/active/ governance/sessions/ses_x.json", "state"],
    ["cat /home/u/proj/.opencode/governance.yaml", "state"],
    ["opencode-governance stop ses_parent --level 3", "cli"],
    ["npx opencode-governance inject ses_p 'push'", "cli"],
    ["node /x/dist/cli/main.js budget ses_me --add toolCalls=100", "cli"],
    ["node_modules/.bin/opencode-governance dashboard --port 1", "cli"],
  ])("bash %s → %s", (command, surface) => {
    expect(bash(command)?.surface).toBe(surface);
  });

  it.each([
    "npm test",
    "git status && ls -la",
    "cd ~/src/opencode-governance && npm run build",
    "opencode-governance sessions --json",
    "grep -rn stop src/",
    "cat .opencode/agent/builder.md",
  ])("ordinary work is not refused: %s", (command) => {
    expect(bash(command)).toBeUndefined();
  });

  it("file tools: the key is never read; the state folder and config are never written, but may be read", () => {
    expect(surfaceNamed("read", { filePath: "/home/u/.local/state/opencode-governance/queue-key" }, s)?.surface).toBe("key");
    expect(surfaceNamed("read", { filePath: "../.local/state/opencode-governance/queue-key" }, s)?.surface).toBe("key");
    expect(surfaceNamed("grep", { pattern: "x", path: "/home/u/.local/state/opencode-governance" }, s)?.surface).toBe("key");
    expect(surfaceNamed("read", { filePath: ".opencode/governance/sessions/ses_x.json" }, s)).toBeUndefined();
    expect(surfaceNamed("write", { filePath: ".opencode/governance/queues/ses_p/1.json", content: "{}" }, s)?.surface).toBe("state");
    expect(surfaceNamed("write", { filePath: "/home/u/proj/sub/../.opencode/governance.yaml", content: "" }, s)?.surface).toBe("state");
    expect(surfaceNamed("edit", { filePath: "src/app.ts", oldString: ".opencode/governance", newString: "" }, s)).toBeUndefined();
    const patch = "*** Begin Patch\n*** Update File: .opencode/governance/sessions/ses_x.json\n@@\n-a\n+b\n*** End Patch";
    expect(surfaceNamed("apply_patch", { patchText: patch }, s)?.surface).toBe("state");
    expect(surfaceNamed("write", { filePath: "docs/notes.md", content: "mentions queue-key" }, s)).toBeUndefined();
    expect(surfaceNamed("webfetch", { url: "http://x/?k=queue-key" }, s)?.surface).toBe("key");
  });

  it("costs O(length): a 1 MB command is scanned within its first 64 KiB", () => {
    const big = `${"a".repeat(1_000_000)} queue-key`;
    const t = performance.now();
    for (let i = 0; i < 20; i++) bash(big);
    expect(bash(big)).toBeUndefined();
    expect((performance.now() - t) / 21).toBeLessThan(20);
  });

  it("the refusal says what was named and what to do instead", () => {
    expect(surfaceRefusal({ surface: "cli", named: "opencode-governance" }, { agent: "general", subagent: true })).toMatch(
      /^Refused by governance: this call names the governance CLI.*general is a subagent.*report to your parent/,
    );
    expect(surfaceRefusal({ surface: "key", named: "queue-key" }, { agent: "build", subagent: false })).toMatch(/Ask the user/);
  });
});

/** Decision 0053: inside the sandbox the key's folder is empty and the state folder read-only, so a read passes. */
describe("a command the sandbox confines: refused only for what it would change", () => {
  const confined = (command: string) => surfaceNamed("bash", { command, description: "x" }, s, { confined: true });

  it.each([
    'ls "$XDG_STATE_HOME"',
    "ls $XDG_STATE_HOME/op*",
    'cat "$XDG_STATE_HOME/opencode-governance/queue-key"',
    "cat .opencode/governance.yaml",
    "ls .opencode/governance/sessions | wc -l",
    "cat .opencode/governance.yaml > /tmp/copy.yaml 2>&1",
    "grep -c session_ .opencode/governance/audit.log",
  ])("a read passes: %s", (command) => {
    expect(confined(command)).toBeUndefined();
    // …and without the sandbox, each one is still refused (the best-effort layer keeps what it held).
    expect(bash(command)?.surface).toMatch(/^(key|state)$/);
  });

  it.each([
    "rm -rf .opencode/governance/sessions",
    "echo x > .opencode/governance/probe.txt",
    "echo 'budgets: {}' >> /home/u/proj/.opencode/governance.yaml",
    "cd .opencode && sed -i s/stopping/active/ governance/sessions/ses_x.json",
    "mv .opencode/governance /tmp/away",
    "touch .opencode/governance/queues/ses_p/1.json",
  ])("a change is refused early, saying it is read-only: %s", (command) => {
    const hit = confined(command);
    expect(hit).toMatchObject({ surface: "state", changes: true });
    expect(surfaceRefusal(hit!, { agent: "worker", subagent: true })).toMatch(
      /^Refused by governance: this command would change governance's state folder or config .* Agent commands may read it but not change it/,
    );
  });

  it("the CLI's acting commands stay refused", () => {
    expect(confined("npx opencode-governance stop ses_parent --level 3")?.surface).toBe("cli");
  });
});
