import { createHash } from "node:crypto";
import { ancestorsOf, type ProtectedPath } from "./protected-set.ts";

/**
 * A governed agent's shell command, confined by bubblewrap (issue 41; docs/decisions/0035-confinement-by-bubblewrap.md).
 * Pure: the protected set in, bwrap's options and the rewritten command out.
 *
 * The whole file system stays as it is (`--dev-bind / /`: the project, temp and caches are written as before); on top
 * of it the key's folder is an empty tmpfs and every read-only entry is bound onto itself read-only. Everything the
 * command starts lives in that mount namespace — `exec`, `setsid -f`, `nohup … &`, a double fork, a detached spawn,
 * `tmux new -d` (a tmux server it starts) — because a mount namespace is inherited and cannot be left without
 * CAP_SYS_ADMIN, which `--cap-drop ALL` takes away even from root. `--die-with-parent`: when OpenCode kills the
 * command (timeout, abort), bwrap's child goes with it; what was detached stays, still confined.
 */
export function bwrapOptions(set: readonly ProtectedPath[], renameable?: (dir: string) => boolean): string[] {
  const args = ["--dev-bind", "/", "/"];
  // Each folder above a protected path that a sandboxed process could rename becomes a mount point (writable as
  // before) so that it cannot be (protected-set.ts `ancestorsOf`).
  for (const dir of ancestorsOf(set, renameable)) args.push("--bind-try", dir, dir);
  for (const e of set) {
    // An empty tmpfs of the sandbox's own: what a command writes there (a key of its own, a tmux socket) stays inside.
    if (e.mode === "hidden") args.push("--tmpfs", e.path);
    else args.push("--ro-bind-try", e.path, e.path);
  }
  args.push("--die-with-parent", "--cap-drop", "ALL");
  return args;
}

/** bwrap's `--args` file: the options, NUL-separated. */
export function bwrapArgsFile(options: readonly string[]): string {
  return options.map((o) => `${o}\0`).join("");
}

/** The options file's name: its text's hash, so processes with the same options share one file and a changed set gets a new one. */
export function argsFileName(text: string): string {
  return `sandbox-${createHash("sha256").update(text).digest("hex").slice(0, 16)}.args`;
}

/** A word for a POSIX shell: single-quoted, a quote inside written `'\''`. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * The command OpenCode runs instead of the agent's: its own shell (`"$0"`, the shell OpenCode started with `-c`) runs
 * the agent's command unchanged inside bwrap, whose options come from `argsFile` on descriptor 3 — a file in the key's
 * folder, written by the plugin at start and hidden inside the sandbox, so no sandboxed process can change it.
 * `exec` puts bwrap where the shell was: OpenCode's kill of the process group reaches it.
 */
export function confinedCommand(command: string, bwrap: string, argsFile: string): string {
  return `exec ${shellQuote(bwrap)} --args 3 -- "$0" -c ${shellQuote(command)} 3< ${shellQuote(argsFile)}`;
}

/** The refusal when the user's or organisation's file says `confinement: required` and no sandbox can run. */
export function confinementRequiredRefusal(why: string, install: string): string {
  return (
    `Refused by governance: shell commands must run confined (confinement: required in the user's or organisation's ` +
    `governance file), and no sandbox can run here: ${why}. The user can install it (${install}) and check with ` +
    "`opencode-governance doctor`. Until then, work with the file tools, or ask the user to run the command."
  );
}

/** The Debian/Ubuntu command that installs bubblewrap (what `doctor`, `status` and the toast say). */
export const INSTALL_BUBBLEWRAP = "sudo apt-get install -y bubblewrap";
