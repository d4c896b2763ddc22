import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fileTargets } from "../../../governance/stop/file-targets.ts";
import { ancestorsOf, protectedSet, protectionOf } from "../../../governance/stop/protected-set.ts";
import { bwrapArgsFile, bwrapOptions, confinedCommand, shellQuote } from "../../../governance/stop/sandbox-command.ts";
import { realTarget } from "../../../plugin/runtime/confinement.ts";
import { keyFile } from "../../../governance/storage/directive-signing.ts";
import { projectLedgerDir, userLedgerDir } from "../../../governance/storage/spend-ledger.ts";
import { PROTECTED_INPUT } from "../fixtures/protected-input.ts";

const INPUT = PROTECTED_INPUT;

describe("the protected set (issue 41): one list for the sandbox and the file tools", () => {
  it("covers both spend ledgers (issue 44): a governed agent can neither lower the project's spend nor the user's", () => {
    const env = { HOME: "/home/u" };
    const set = protectedSet({ ...INPUT, keyDir: path.dirname(keyFile(env)) });
    const project = path.join(projectLedgerDir(INPUT.projectDir), "2026-11-28.p1-ab.jsonl");
    const user = path.join(userLedgerDir(env), "2026-11-28.p1-ab.jsonl");
    expect(protectionOf(project, "write", set)?.mode).toBe("read-only");
    expect(protectionOf(user, "write", set)?.mode).toBe("hidden");
    expect(protectionOf(user, "read", set)?.mode).toBe("hidden");
  });

  it("hides the key's folder; the project's .opencode/, its opencode.json(c), the user's folder, the policy and the plugin's code are read-only", () => {
    expect(protectedSet(INPUT).map((e) => [e.path, e.mode])).toEqual([
      ["/home/u/.local/state/opencode-governance", "hidden"],
      ["/home/u/proj/.opencode", "read-only"],
      ["/home/u/proj/opencode.json", "read-only"],
      ["/home/u/proj/opencode.jsonc", "read-only"],
      ["/home/u/.config/opencode", "read-only"],
      ["/etc/opencode-governance/policy.yaml", "read-only"],
      ["/home/u/.cache/opencode/node_modules/opencode-governance", "read-only"],
    ]);
  });

  it("leaves out the plugin's code when it is the project (this repository governing itself) or lies inside it", () => {
    expect(protectedSet({ ...INPUT, pluginDir: "/home/u/proj" }).some((e) => e.why === "plugin-code")).toBe(false);
    expect(protectedSet({ ...INPUT, pluginDir: "/home/u" }).some((e) => e.why === "plugin-code")).toBe(false);
    expect(protectedSet({ ...INPUT, pluginDir: "/home/u/proj/node_modules/opencode-governance" }).some((e) => e.why === "plugin-code")).toBe(false);
  });

  it("pins every folder above a protected path (so it cannot be renamed away), outermost first, never one inside", () => {
    const dirs = ancestorsOf(protectedSet(INPUT));
    expect(dirs.slice(0, 3)).toEqual(["/etc", "/home", "/etc/opencode-governance"]);
    expect(protectedSet({ ...INPUT, tmuxDir: "/tmp/tmux-1000" }).find((e) => e.why === "session-server")).toEqual({
      path: "/tmp/tmux-1000",
      mode: "hidden",
      why: "session-server",
    });
    expect(dirs).toContain("/home/u/proj");
    expect(dirs).toContain("/home/u/.local/state");
    expect(dirs.some((d) => d.startsWith("/home/u/proj/.opencode") || d.startsWith("/home/u/.config/opencode"))).toBe(false);
  });

  it("refuses reads and writes in the hidden folder, writes in a read-only one, and a search over a folder holding the key", () => {
    const set = protectedSet(INPUT);
    expect(protectionOf("/home/u/.local/state/opencode-governance/queue-key", "read", set)?.why).toBe("key");
    expect(protectionOf("/home/u/proj/.opencode/governance/sessions/x.json", "read", set)).toBeUndefined();
    expect(protectionOf("/home/u/proj/.opencode/plugins/off.js", "write", set)?.why).toBe("project-config");
    expect(protectionOf("/home/u/proj/opencode.json", "write", set)?.why).toBe("opencode-config");
    expect(protectionOf("/home/u/proj/src/a.ts", "write", set)).toBeUndefined();
    expect(protectionOf("/home/u/proj/.opencodex/a", "write", set)).toBeUndefined();
    expect(protectionOf("/home/u", "read", set, { searches: true })?.why).toBe("key");
    expect(protectionOf("/home/u", "read", set)).toBeUndefined();
  });

  it("compares identities too: another name for a protected folder (a bind mount, another case) is refused", () => {
    const set = protectedSet(INPUT);
    const idOf = (p: string) => (p === "/mnt/alias" || p === "/home/u/proj/.opencode" ? "7:42" : undefined);
    expect(protectionOf("/mnt/alias/plugin/governance.js", "write", set, { idOf })?.why).toBe("project-config");
    expect(protectionOf("/mnt/other/file", "write", set, { idOf })).toBeUndefined();
  });
});

describe("real paths of file-tool targets", () => {
  it("follows a symlink, `..` and a missing file under a linked folder to where the kernel would write", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-real-")));
    try {
      fs.mkdirSync(path.join(root, "proj", ".opencode", "plugins"), { recursive: true });
      fs.mkdirSync(path.join(root, "proj", "src"));
      fs.symlinkSync(path.join(root, "proj", ".opencode"), path.join(root, "proj", "link"));
      expect(realTarget(path.join(root, "proj", "link", "plugins", "new.js"))).toBe(path.join(root, "proj", ".opencode", "plugins", "new.js"));
      expect(realTarget(`${root}/proj/src/../.opencode/plugins`)).toBe(path.join(root, "proj", ".opencode", "plugins"));
      expect(realTarget(path.join(root, "proj", "missing", "deeper", "x"))).toBe(path.join(root, "proj", "missing", "deeper", "x"));
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("file tools' targets (both host lines)", () => {
  it("reads, writes, patches and searches", () => {
    expect(fileTargets("write", { filePath: "a.txt", content: "x" })).toEqual({ access: "write", paths: ["a.txt"], searches: false });
    expect(fileTargets("read", { path: "/x/y" })).toEqual({ access: "read", paths: ["/x/y"], searches: false });
    expect(fileTargets("grep", { pattern: "k" })).toEqual({ access: "read", paths: ["."], searches: true });
    expect(fileTargets("apply_patch", { patchText: "*** Begin Patch\n*** Update File: opencode.json\n*** Move to: .opencode/plugins/x.js\n" })?.paths).toEqual([
      "opencode.json",
      ".opencode/plugins/x.js",
    ]);
    expect(fileTargets("bash", { command: "ls" })).toBeUndefined();
    expect(fileTargets("mcp_tool", { path: "/x" })).toBeUndefined();
  });
});

describe("the bwrap command", () => {
  it("quotes any command for the shell and reads the options from descriptor 3", () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(confinedCommand("echo 'hi' $HOME", "/usr/bin/bwrap", "/k/sandbox.args")).toBe(
      `exec '/usr/bin/bwrap' --args 3 -- "$0" -c 'echo '\\''hi'\\'' $HOME' 3< '/k/sandbox.args'`,
    );
    const options = bwrapOptions(protectedSet(INPUT));
    expect(options.slice(0, 3)).toEqual(["--dev-bind", "/", "/"]);
    expect(options).toEqual(
      expect.arrayContaining(["--tmpfs", INPUT.keyDir, "--ro-bind-try", "/home/u/proj/.opencode", "--die-with-parent", "--cap-drop", "ALL"]),
    );
    expect(bwrapArgsFile(["a", "b"])).toBe("a\0b\0");
  });

  it.skipIf(!fs.existsSync("/usr/bin/bwrap"))("runs the command unchanged in a shell, with the key hidden and .opencode read-only (real bwrap)", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-bwrap-")));
    try {
      const input = {
        projectDir: path.join(root, "p"),
        keyDir: path.join(root, "key"),
        userConfigDir: path.join(root, "cfg"),
        orgPolicyFile: path.join(root, "policy.yaml"),
      };
      for (const d of [input.keyDir, path.join(input.projectDir, ".opencode"), input.userConfigDir]) fs.mkdirSync(d, { recursive: true });
      fs.writeFileSync(path.join(input.keyDir, "queue-key"), "secret");
      const argsFile = path.join(root, "sandbox.args");
      fs.writeFileSync(argsFile, bwrapArgsFile(bwrapOptions(protectedSet(input))));
      const command = `cat ${input.keyDir}/queue-key 2>&1; touch .opencode/x 2>&1; touch ok && echo "it's $((1+1))"`;
      const out = execFileSync("bash", ["-c", confinedCommand(command, "/usr/bin/bwrap", argsFile)], { cwd: input.projectDir, encoding: "utf8" });
      expect(out).toContain("No such file or directory");
      expect(out).toContain("Read-only file system");
      expect(out).toContain("it's 2");
      expect(fs.existsSync(path.join(input.projectDir, "ok"))).toBe(true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
