import fs from "node:fs";
import path from "node:path";
import { shellQuote } from "../../governance/stop/sandbox-command.ts";
import type { SandboxState } from "./confinement.ts";

/**
 * Entering the sandbox after the host's permission check (docs/decisions/0071-confine-after-the-permission-check.md).
 * OpenCode checks an agent's own `bash` rules on the command text `tool.execute.before` leaves, so the command text
 * stays the agent's; the shell OpenCode then starts for that call gets `BASH_ENV` (through `shell.env`, matched by
 * call id), a script that bash runs before the command and that replaces the shell with bwrap running the same
 * command (`$BASH_EXECUTION_STRING`) in a new bash inside the sandbox. Bash only: other shells keep the text rewrite.
 */

/** The variable carrying a user's own `BASH_ENV` into the confined shell (ours replaces it on the way in). */
export const USER_BASH_ENV = "OPENCODE_GOVERNANCE_USER_BASH_ENV";

/**
 * The variables that send a bash the host starts into the sandbox, given the environment it would start with: BASH_ENV
 * names the entry script, a user's own BASH_ENV is carried inside, and SHLVL is set where absent (bash skips BASH_ENV
 * when it takes itself for sshd's shell: stdin a socket and SHLVL below 1).
 */
export function entryEnv(entry: string, env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return {
    BASH_ENV: entry,
    ...(env.BASH_ENV ? { [USER_BASH_ENV]: env.BASH_ENV } : {}),
    ...(Number(env.SHLVL) >= 1 ? {} : { SHLVL: "1" }),
  };
}

/**
 * The script's text. It never falls through to the agent's command: a failed `exec` ends a non-interactive bash
 * (126/127), and a failed redirection of the options file reaches the explicit `exit 126`.
 */
export function bashEntryScript(bwrap: string, argsFile: string): string {
  return [
    "# opencode-governance: this bash runs an agent's command; it continues only inside the sandbox.",
    `if [ -n "\${${USER_BASH_ENV}-}" ]; then export BASH_ENV="$${USER_BASH_ENV}"; else unset BASH_ENV; fi`,
    `unset ${USER_BASH_ENV}`,
    `exec ${shellQuote(bwrap)} --args 3 -- "$BASH" -c "$BASH_EXECUTION_STRING" 3< ${shellQuote(argsFile)}`,
    'echo "opencode-governance: the sandbox (bwrap) could not start; the command did not run." >&2',
    "exit 126",
    "",
  ].join("\n");
}

/**
 * The script's path, written once per options file next to it in the key's folder: hidden inside the sandbox (no
 * confined command reads or replaces it) and owner-only outside. Throws when it cannot be written (the caller then
 * rewrites the command text instead).
 */
export function bashEntry(state: Extract<SandboxState, { ok: true }>): string {
  const file = state.argsFile.replace(/\.args$/, ".bash-env");
  const text = bashEntryScript(state.bwrap, state.argsFile);
  let current: string | undefined;
  try {
    current = fs.readFileSync(file, "utf8");
  } catch {
    // absent: written below
  }
  if (current !== text) {
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, text, { mode: 0o600 });
    fs.renameSync(temp, file);
  }
  return file;
}

/**
 * The shell OpenCode 1.18 starts for the `bash` tool (its shell module, read from the 1.18.33 binary): the config's
 * `shell`, else `$SHELL` unless it is fish or nu, else `bash` on PATH, else /bin/sh — each only when the file exists.
 */
export function hostShell(configShell: string | undefined, env: NodeJS.ProcessEnv): string {
  for (const candidate of [configShell, env.SHELL]) {
    if (!candidate || /^(fish|nu)$/i.test(path.basename(candidate))) continue;
    const found = resolveProgram(candidate, env);
    if (found) return found;
  }
  return resolveProgram("bash", env) ?? "/bin/sh";
}

function resolveProgram(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = path.isAbsolute(name) ? [""] : (env.PATH ?? "").split(path.delimiter).filter((d) => d !== "");
  for (const dir of dirs) {
    const file = dir === "" ? name : path.join(dir, name);
    try {
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Whether the host's shell is bash (the only shell `BASH_ENV` reaches). */
export function isBash(shell: string): boolean {
  return path.basename(shell) === "bash";
}
