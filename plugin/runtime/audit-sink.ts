import { AuditLog, type AuditEventType } from "../../governance/storage/audit-log.ts";
import type { GovernancePaths } from "../../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../../governance/storage/quarantine.ts";
import type { Clock } from "../../governance/time/clock.ts";

/**
 * The plugin's one way to the audit log: appends never throw, errors of every part (hooks, timers, effects) are
 * reported the same way (`hook_error`), store problems once per file, and lines in flight are awaited on shutdown.
 */
export class AuditSink {
  #log: AuditLog;
  readonly #paths: GovernancePaths;
  readonly #clock: Clock;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #reported = new Set<string>();

  readonly #notify: (p: StoreProblem) => void;
  readonly #taps: ((type: string, data: Record<string, unknown>) => void)[] = [];

  /** `notify` sees each new store problem once (the plugin shows a toast: the audit log itself may be what failed). */
  constructor(paths: GovernancePaths, clock: Clock, maxBytes: number, notify: (p: StoreProblem) => void = () => undefined) {
    this.#notify = notify;
    this.#paths = paths;
    this.#clock = clock;
    this.#log = this.#open(maxBytes);
  }

  #open(maxBytes: number): AuditLog {
    return new AuditLog({ paths: this.#paths, clock: this.#clock, maxBytes, onProblem: (p) => this.problem(p) });
  }

  /** The underlying log (for the governance tool, which writes requests like the CLI does). */
  get log(): AuditLog {
    return this.#log;
  }

  /** The rotation size comes from the config; the log is rebuilt only when it changes. */
  resize(maxBytes: number): void {
    if (maxBytes !== this.#log.maxBytes) this.#log = this.#open(maxBytes);
  }

  /** A listener that sees every event this process records (the telemetry export, the user's hooks). Must not throw or block. */
  tap(listener: (type: string, data: Record<string, unknown>) => void): void {
    this.#taps.push(listener);
  }

  async record(type: AuditEventType, data: Record<string, unknown> = {}): Promise<void> {
    for (const tap of this.#taps) {
      try {
        tap(type, data);
      } catch {
        // A listener (telemetry, a hook) must never break auditing.
      }
    }
    const p = this.#log.append(type, data);
    this.#inFlight.add(p);
    try {
      await p;
    } finally {
      this.#inFlight.delete(p);
    }
  }

  /** An unexpected error of a hook, timer or effect: reported, never thrown. */
  reportError(where: string, error: unknown): void {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    void this.record("hook_error", { hook: where, message: message.slice(0, 500) });
  }

  problem(p: StoreProblem): void {
    const key = `${p.kind}:${p.file}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    void this.record("store_problem", { ...p });
    try {
      this.#notify(p);
    } catch {
      // A failed notification must not break reporting.
    }
  }

  read(options?: Parameters<AuditLog["read"]>[0]): ReturnType<AuditLog["read"]> {
    return this.#log.read(options);
  }

  async settle(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }
}
