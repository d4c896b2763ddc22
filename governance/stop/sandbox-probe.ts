import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { orgPolicyFile } from "../config/org-policy.ts";
import { userConfigFile } from "../config/user-config.ts";
import { keyFile } from "../storage/directive-signing.ts";
import { type FolderOwner, type ProtectedPath, protectedSet, renameableUnder } from "./protected-set.ts";
import { bwrapOptions } from "./sandbox-command.ts";

/**
 * Whether a sandbox can run here (issue 41): the plugin asks before the first shell command, `doctor` and `status`
 * ask on demand — the same answer from the same code. I/O: PATH lookup and one bwrap run around `true`.
 */
export type SandboxProbe = { ok: true; bwrap: string } | { ok: false; why: string };

/** The protected set of a project for this user's environment (where the key, the user's file and the policy live). */
export function protectedSetFor(projectDir: string, env: NodeJS.ProcessEnv, pluginDir?: string): ProtectedPath[] {
  return protectedSet({
    projectDir,
    keyDir: path.dirname(keyFile(env)),
    userConfigDir: path.dirname(userConfigFile(env)),
    orgPolicyFile: orgPolicyFile(env),
    tmuxDir: path.join(env.TMUX_TMPDIR && path.isAbsolute(env.TMUX_TMPDIR) ? env.TMUX_TMPDIR : "/tmp", `tmux-${process.getuid?.() ?? 0}`),
    ...(pluginDir ? { pluginDir } : {}),
  });
}

/**
 * Whether a sandboxed process of this user could rename a folder (protected-set.ts `renameableUnder`), from its
 * parent's owner and mode, each parent read once (a `stat`) and kept: the answer goes into the options file written
 * once per process. What can change meanwhile is the parent's owner granting write (root's `chmod` on `/home`), not
 * anything an agent can do; the next OpenCode start reads it again.
 */
export function folderRenameable(uid: number = process.getuid?.() ?? 0): (dir: string) => boolean {
  const parents = new Map<string, FolderOwner | undefined>();
  const ownerOf = (dir: string) => {
    if (!parents.has(dir)) {
      try {
        const st = fs.statSync(dir);
        parents.set(dir, { uid: st.uid, mode: st.mode });
      } catch {
        parents.set(dir, undefined);
      }
    }
    return parents.get(dir);
  };
  return (dir) => renameableUnder(ownerOf(path.dirname(dir)), uid);
}

/** The first executable `bwrap` on `PATH` (OpenCode's own PATH, which no agent command can change), or undefined. */
export function findBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const file = path.join(dir, "bwrap");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * bwrap run once with the real options around `true`: what a wrapped command would meet (user namespaces off, a mount
 * refused). The hidden folders must exist (bwrap mounts its tmpfs on an existing folder).
 */
export function probeSandbox(
  set: readonly ProtectedPath[],
  env: NodeJS.ProcessEnv = process.env,
  renameable: (dir: string) => boolean = folderRenameable(),
): Promise<SandboxProbe> {
  if (process.platform !== "linux") return Promise.resolve({ ok: false, why: `no sandbox on ${process.platform} yet (bubblewrap is Linux only)` });
  const bwrap = findBwrap(env);
  if (!bwrap) return Promise.resolve({ ok: false, why: "bubblewrap (bwrap) is not installed (not on PATH)" });
  const hidden = set.filter((e) => e.mode === "hidden" && !fs.existsSync(e.path));
  const options = bwrapOptions(
    set.filter((e) => !hidden.includes(e)),
    renameable,
  );
  return new Promise((resolve) => {
    execFile(bwrap, [...options, "--", "true"], { timeout: 5_000 }, (error, _out, stderr) => {
      if (!error) resolve({ ok: true, bwrap });
      else
        resolve({
          ok: false,
          why: `bwrap cannot run here (${(String(stderr).trim() || error.message).slice(0, 200)}); unprivileged user namespaces may be off`,
        });
    });
  });
}
