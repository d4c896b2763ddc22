import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { bashEntryScript, hostShell, isBash, USER_BASH_ENV } from "../../../plugin/runtime/shell-entry.ts";
import { ConfinedCalls } from "../../../plugin/opencode-1/shell-confine.ts";
import { ConfinedShells } from "../../../plugin/opencode-2/shell-confine.ts";
import type { ShellCreateEvent } from "../../../plugin/opencode-2/types.ts";
import type { Runtime } from "../../../plugin/wiring/runtime.ts";

/**
 * The entry script that puts an agent's bash into the sandbox after OpenCode's permission check (decision 0071), run
 * by a real bash the way OpenCode 1.18 starts it (`bash -c <command>` with BASH_ENV set). A stand-in for bwrap records
 * what it was asked to run; the sandbox itself is exercised on the real binary (test/e2e/confinement.test.ts).
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-entry-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function runWith(bwrap: string, argsFile: string, command: string, env: NodeJS.ProcessEnv = {}) {
  const script = path.join(dir, `entry-${Math.random().toString(36).slice(2)}.bash-env`);
  fs.writeFileSync(script, bashEntryScript(bwrap, argsFile));
  // stdin a pipe (a socket in Node) and SHLVL unset would make bash take itself for sshd's and skip BASH_ENV: OpenCode
  // starts the shell with stdin ignored, and ConfinedCalls sets SHLVL where the host has none (checked below).
  const stdio = ["ignore", "pipe", "pipe"] as const;
  return spawnSync("bash", ["-c", command], { env: { PATH: process.env.PATH, ...env, BASH_ENV: script }, encoding: "utf8", cwd: dir, stdio: [...stdio] });
}

describe("the bash entry script", () => {
  const args = path.join(dir, "sandbox.args");
  fs.writeFileSync(args, "--dev-bind\0/\0/\0");
  // Prints its arguments, the options it reads on descriptor 3 and whether BASH_ENV is still set, then runs the rest.
  const fake = path.join(dir, "fake-bwrap");
  fs.writeFileSync(
    fake,
    `#!/bin/bash\necho "bwrap $1 $2 $3 shell=$(basename "$4") $5"; echo "opts=$(tr '\\0' ' ' <&3)"; echo "BASH_ENV=\${BASH_ENV-unset} user=\${${USER_BASH_ENV}-unset}"; shift 3; exec "$@"\n`,
    { mode: 0o755 },
  );

  test("the agent's command runs through bwrap, unchanged, in a bash without our BASH_ENV", () => {
    const r = runWith(fake, args, `echo "it's $((1+1))" | tr a-z A-Z`);
    expect(r.stdout).toContain("bwrap --args 3 -- shell=bash -c");
    expect(r.stdout).toContain("opts=--dev-bind / /");
    expect(r.stdout).toContain("BASH_ENV=unset user=unset");
    expect(r.stdout).toContain("IT'S 2");
    expect(r.status).toBe(0);
  });

  test("a user's own BASH_ENV is carried into the confined shell", () => {
    const mine = path.join(dir, "mine.sh");
    fs.writeFileSync(mine, "echo user-bash-env-ran\n");
    const r = runWith(fake, args, "true", { [USER_BASH_ENV]: mine });
    expect(r.stdout).toContain(`BASH_ENV=${mine} user=unset`);
    expect(r.stdout).toContain("user-bash-env-ran");
  });

  test("fails closed: no bwrap, or no options file — exit 126 and the command never runs", () => {
    const marker = path.join(dir, "ran");
    for (const [bwrap, file] of [
      [path.join(dir, "no-such-bwrap"), args],
      [fake, path.join(dir, "no-such.args")],
    ] as const) {
      const r = runWith(bwrap, file, `touch ${marker}`);
      expect(r.status === 126 || r.status === 127).toBe(true);
      expect(fs.existsSync(marker)).toBe(false);
    }
    expect(runWith(fake, path.join(dir, "no-such.args"), "true").stderr).toContain("the command did not run");
  });
});

describe("which shell OpenCode 1.18 starts, and the calls confined through it", () => {
  const bash = spawnSync("bash", ["-c", "command -v bash"], { encoding: "utf8" }).stdout.trim();

  test("the config's shell, else $SHELL unless fish or nu, else bash on PATH", () => {
    expect(hostShell(undefined, { SHELL: bash, PATH: "" })).toBe(bash);
    expect(hostShell("/bin/sh", { SHELL: bash, PATH: "" })).toBe("/bin/sh");
    expect(hostShell(undefined, { SHELL: "/usr/bin/fish", PATH: path.dirname(bash) })).toBe(path.join(path.dirname(bash), "bash"));
    expect(hostShell(undefined, { SHELL: "/nowhere/zsh", PATH: "/nowhere" })).toBe("/bin/sh");
    expect(isBash(bash)).toBe(true);
    expect(isBash("/bin/sh")).toBe(false);
  });

  test("a call's entry is given to its own shell once; another call, the user's `!` or a PTY gets nothing", () => {
    const calls = new ConfinedCalls({ SHELL: bash, PATH: "", BASH_ENV: "/home/u/.bash_env" });
    calls.add("call_1", "/state/entry.bash-env");
    expect(calls.env(undefined)).toEqual({});
    expect(calls.env("call_2")).toEqual({});
    expect(calls.env("call_1")).toEqual({ BASH_ENV: "/state/entry.bash-env", [USER_BASH_ENV]: "/home/u/.bash_env", SHLVL: "1" });
    expect(calls.env("call_1")).toEqual({});
    expect(calls.bash).toBe(true);
    const sh = new ConfinedCalls({ SHELL: "/bin/sh", PATH: "", SHLVL: "2" });
    expect(sh.bash).toBe(false);
    sh.add("call_3", "/state/entry.bash-env");
    expect(sh.env("call_3")).toEqual({ BASH_ENV: "/state/entry.bash-env" });
  });

  test("a confined call that ran without shell.env naming it is reported once, and every later call is rewritten", () => {
    const calls = new ConfinedCalls({ SHELL: bash, PATH: "", SHLVL: "1" });
    calls.add("call_1", "/state/entry.bash-env");
    calls.add("call_2", "/state/entry.bash-env");
    expect(calls.env("call_1")).toEqual({ BASH_ENV: "/state/entry.bash-env" });
    expect(calls.ranUnconfined("call_1")).toBe(false);
    expect(calls.bash).toBe(true);
    expect(calls.ranUnconfined("call_2")).toBe(true);
    expect(calls.ranUnconfined("call_2")).toBe(false);
    expect(calls.bash).toBe(false);
  });
});

describe("OpenCode 2.0.15's create.before: the remembered command's shell enters the sandbox", () => {
  const known = { ok: true as const, bwrap: "/usr/bin/bwrap", argsFile: "/k/sandbox.args" };
  const rt = { ctx: { confinement: { known, wrap: (c: string) => `WRAPPED ${c}` } } } as unknown as Runtime;
  const event = (command: string, shell: string, env: Record<string, string> = {}): ShellCreateEvent => ({ command, cwd: "/p", timeout: 0, shell, env });

  test("bash: BASH_ENV names the entry, the command the host checks is unchanged; an unknown command is left alone", () => {
    const shells = new ConfinedShells();
    shells.add("git status", "/k/entry.bash-env");
    const user = event("git status", "/bin/bash", { BASH_ENV: "/u/env", SHLVL: "0" });
    const other = event("ls", "/bin/bash");
    shells.confine(rt, other);
    expect(other.env).toEqual({});
    shells.confine(rt, user);
    expect(user).toMatchObject({ command: "git status", env: { BASH_ENV: "/k/entry.bash-env", [USER_BASH_ENV]: "/u/env", SHLVL: "1" } });
    // Taken once: the same text typed by the user afterwards (`!git status`) is theirs.
    const again = event("git status", "/bin/bash");
    shells.confine(rt, again);
    expect(again.env).toEqual({});
  });

  test("another shell: the command is rewritten at create time (the host's rules then see bwrap, decision 0071)", () => {
    const shells = new ConfinedShells();
    shells.add("echo hi", "/k/entry.bash-env");
    const e = event("echo hi", "/usr/bin/zsh");
    shells.confine(rt, e);
    expect(e.command).toBe("WRAPPED echo hi");
    expect(e.env).toEqual({});
  });

  test("a completed call whose command never reached create.before ran outside the sandbox: said once, then rewritten", () => {
    const shells = new ConfinedShells();
    shells.add("git status", "/k/entry.bash-env");
    shells.add("ls", "/k/entry.bash-env");
    shells.confine(rt, event("git status", "/bin/bash"));
    expect(shells.ranUnconfined("git status")).toBe(false);
    expect(shells.byEnv).toBe(true);
    expect(shells.ranUnconfined("ls")).toBe(true);
    expect(shells.byEnv).toBe(false);
  });
});
