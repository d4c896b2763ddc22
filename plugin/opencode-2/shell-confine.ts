import { entryEnv, isBash } from "../runtime/shell-entry.ts";
import type { Runtime } from "../wiring/runtime.ts";
import type { ShellCreateEvent } from "./types.ts";

/** How many confined calls are remembered until their shell is created (a turn has a handful). */
const REMEMBERED = 256;

/**
 * OpenCode 2.0.15's shell calls the gate confined (decision 0071), until the host creates their shell. 2.0.15 runs
 * `shell.hook("create.before")` on `{ command, cwd, timeout, shell, env }` and THEN checks the agent's `shell` rules on
 * `command` (ShellTool.prepare), then spawns `shell -c command` with `env`: governance leaves `command` as the agent
 * wrote it and confines through `env` (bash: BASH_ENV, plugin/runtime/shell-entry.ts). The event names no session or
 * call, so a call is matched by its command text, as `execute.before` saw it; a shell the user starts (`!`) has none.
 * Bounded, oldest dropped.
 */
export class ConfinedShells {
  readonly #calls: { command: string; entry: string }[] = [];
  /** Set when 2.0.15 ran a confined call's shell without `create.before`: the text rewrite from then on. */
  #bypassed = false;

  /** Whether a shell call is confined through its environment (else the gate rewrites its command text). */
  get byEnv(): boolean {
    return !this.#bypassed;
  }

  /**
   * `execute.after` of a shell call that completed: true when its command was to be confined at `create.before` and
   * the host never passed it there — it ran outside the sandbox. Every later call falls back to the rewrite.
   */
  ranUnconfined(command: unknown): boolean {
    const i = this.#calls.findIndex((c) => c.command === command);
    if (i < 0) return false;
    this.#calls.splice(i, 1);
    this.#bypassed = true;
    return true;
  }

  add(command: string, entry: string): void {
    this.#calls.push({ command, entry });
    if (this.#calls.length > REMEMBERED) this.#calls.shift();
  }

  /**
   * `create.before`: a remembered command's shell enters the sandbox — through its environment when the shell is bash,
   * else by the command text rewritten to run in bwrap (the host's rules then see bwrap: today's limit for other shells).
   */
  confine(rt: Runtime, e: ShellCreateEvent): void {
    const i = this.#calls.findIndex((c) => c.command === e.command);
    if (i < 0) return;
    const [{ entry }] = this.#calls.splice(i, 1) as [{ command: string; entry: string }];
    if (isBash(e.shell)) {
      Object.assign(e.env, entryEnv(entry, e.env));
      return;
    }
    const state = rt.ctx.confinement.known;
    if (state?.ok) e.command = rt.ctx.confinement.wrap(e.command, state);
    else throw new Error("governance: a confined shell call found no sandbox at create time");
  }
}
