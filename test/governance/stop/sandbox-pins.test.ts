import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ancestorsOf, protectedSet, renameableUnder } from "../../../governance/stop/protected-set.ts";
import { bwrapArgsFile, bwrapOptions, confinedCommand } from "../../../governance/stop/sandbox-command.ts";
import { folderRenameable } from "../../../governance/stop/sandbox-probe.ts";
import { PROTECTED_INPUT } from "../fixtures/protected-input.ts";

/**
 * The pins (issue 41 acceptance: the cost per shell command; docs/decisions/0055-fewer-pins.md): a folder above a
 * protected path is bound onto itself only where a sandboxed process could rename it — every mount costs each shell
 * command — and the answer, read once per process, must never leave a folder renameable that was pinned before.
 */
const INPUT = { ...PROTECTED_INPUT, tmuxDir: "/tmp/tmux-1000" };
const U = 1000;
/** A user's machine: the system's folders are root's (755, `/tmp` 1777), the home folder the user's. */
const OWNERS: Record<string, { uid: number; mode: number }> = {
  "/": { uid: 0, mode: 0o40755 },
  "/etc": { uid: 0, mode: 0o40755 },
  "/home": { uid: 0, mode: 0o40755 },
  "/tmp": { uid: 0, mode: 0o41777 },
};
const asUser = (dir: string) => renameableUnder(OWNERS[path.dirname(dir)] ?? { uid: U, mode: 0o40700 }, U);

describe("which folders a sandboxed process could rename", () => {
  it("no for a folder whose parent is another user's and grants write to no one else; yes for the parent's owner, a group/other write bit, or root", () => {
    expect(renameableUnder({ uid: 0, mode: 0o40755 }, U)).toBe(false);
    expect(renameableUnder({ uid: U, mode: 0o40500 }, U)).toBe(true);
    expect(renameableUnder({ uid: 0, mode: 0o40775 }, U)).toBe(true);
    expect(renameableUnder({ uid: 0, mode: 0o41777 }, U)).toBe(true);
    expect(renameableUnder({ uid: 0, mode: 0o40755 }, 0)).toBe(true);
    expect(renameableUnder(undefined, U)).toBe(true);
  });

  it("a user's pins: the folders inside the home folder only (/etc, /home, /home/u and /tmp cannot be renamed by the user)", () => {
    const all = ancestorsOf(protectedSet(INPUT));
    const kept = ancestorsOf(protectedSet(INPUT), asUser);
    expect(all).toEqual(expect.arrayContaining(["/etc", "/home", "/tmp", "/home/u", "/etc/opencode-governance"]));
    expect(kept).toEqual([
      "/home/u/.cache",
      "/home/u/.config",
      "/home/u/.local",
      "/home/u/proj",
      "/home/u/.cache/opencode",
      "/home/u/.local/state",
      "/home/u/.cache/opencode/node_modules",
    ]);
    expect(bwrapOptions(protectedSet(INPUT), asUser).filter((o) => o === "--bind-try").length).toBe(kept.length);
    // Root keeps every pin: it owns the system's folders.
    expect(ancestorsOf(protectedSet(INPUT), (d) => renameableUnder(OWNERS[path.dirname(d)], 0))).toEqual(all);
  });

  it("reads each parent from the disk once per answer: a folder under a root-owned 755 parent is not renameable for another user, under a 1777 one it is", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-pins-")));
    try {
      fs.mkdirSync(path.join(root, "closed", "a"), { recursive: true });
      fs.mkdirSync(path.join(root, "open", "a"), { recursive: true });
      fs.chmodSync(path.join(root, "closed"), 0o755);
      fs.chmodSync(path.join(root, "open"), 0o1777);
      const owner = fs.statSync(root).uid;
      const other = folderRenameable(owner + 4242);
      expect(other(path.join(root, "closed", "a"))).toBe(false);
      expect(other(path.join(root, "open", "a"))).toBe(true);
      expect(other(path.join(root, "missing", "a"))).toBe(true);
      expect(folderRenameable(owner)(path.join(root, "closed", "a"))).toBe(true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  const asRoot = process.getuid?.() === 0 && fs.existsSync("/usr/bin/bwrap") && spawnSync("setpriv", ["--help"]).status === 0;
  it.skipIf(!asRoot)("on the real kernel, as a user: the folder left unpinned cannot be renamed, the pinned one is busy (bwrap, setpriv to nobody)", () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-pins-real-")));
    try {
      fs.chmodSync(root, 0o755);
      const home = path.join(root, "home");
      const input = {
        projectDir: path.join(home, "proj"),
        keyDir: path.join(home, "state", "opencode-governance"),
        userConfigDir: path.join(home, "config"),
        orgPolicyFile: path.join(root, "policy.yaml"),
      };
      for (const d of [input.keyDir, path.join(input.projectDir, ".opencode"), input.userConfigDir]) fs.mkdirSync(d, { recursive: true });
      execFileSync("chown", ["-R", "65534:65534", home]);
      const options = bwrapOptions(protectedSet(input), folderRenameable(65534));
      expect(options.join(" ")).not.toContain(`--bind-try ${home} `);
      expect(options.join(" ")).toContain(`--bind-try ${path.join(home, "state")} `);
      const argsFile = path.join(root, "sandbox.args");
      fs.writeFileSync(argsFile, bwrapArgsFile(options), { mode: 0o644 });
      const command = `mv ${home} ${root}/moved 2>&1; mv ${home}/state ${home}/moved 2>&1; mv ${home}/proj/.opencode ${home}/proj/x 2>&1; echo done`;
      const out = execFileSync(
        "setpriv",
        ["--reuid", "65534", "--regid", "65534", "--clear-groups", "bash", "-c", confinedCommand(command, "/usr/bin/bwrap", argsFile)],
        {
          cwd: root,
          encoding: "utf8",
        },
      );
      expect(out).toContain("Permission denied");
      expect(out.match(/Device or resource busy/g)?.length).toBe(2);
      expect(out).toContain("done");
      expect(fs.existsSync(path.join(home, "state", "opencode-governance"))).toBe(true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
