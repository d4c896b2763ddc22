import { entryEnv, hostShell, isBash } from "../runtime/shell-entry.ts";

/** How many confined calls are remembered until their shell starts (a turn has a handful; parallel calls a few more). */
const REMEMBERED = 256;

/**
 * The `bash` calls the gate confined through their shell's environment (decision 0071), by call id, until OpenCode 1
 * starts their shell: its `shell.env` names the call (`callID`) after the permission check. Bounded, oldest dropped.
 */
export class ConfinedCalls {
  readonly #calls = new Map<string, string>();
  #bash: boolean | undefined;
  /** Set when the host ran a confined call's shell without naming it to `shell.env`: the text rewrite from then on. */
  #bypassed = false;
  /** The config's `shell` (OpenCode's `config` hook passes it before any tool runs). */
  configShell: string | undefined;

  constructor(readonly hostEnv: NodeJS.ProcessEnv = process.env) {}

  /** Whether the host's shell is bash, found at the first shell call (the only shell `BASH_ENV` reaches). */
  get bash(): boolean {
    this.#bash ??= isBash(hostShell(this.configShell, this.hostEnv));
    return this.#bash && !this.#bypassed;
  }

  add(callId: string, entry: string): void {
    this.#calls.set(callId, entry);
    if (this.#calls.size > REMEMBERED) this.#calls.delete(this.#calls.keys().next().value as string);
  }

  /**
   * `tool.execute.after` of a `bash` call (OpenCode 1 calls it only for a call that ran): true when the call was to be
   * confined through its shell's environment and `shell.env` never named it — the command ran outside the sandbox.
   * Every later call falls back to the command rewrite (fail closed).
   */
  ranUnconfined(callId: string): boolean {
    if (!this.#calls.delete(callId)) return false;
    this.#bypassed = true;
    return true;
  }

  /** The variables for the shell of `callId`: BASH_ENV names the entry script (a user's own BASH_ENV is carried inside). */
  env(callId: string | undefined): Record<string, string> {
    const entry = callId === undefined ? undefined : this.#calls.get(callId);
    if (entry === undefined) return {};
    this.#calls.delete(callId as string);
    return entryEnv(entry, this.hostEnv);
  }
}
