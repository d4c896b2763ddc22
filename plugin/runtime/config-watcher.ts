import { statSync } from "node:fs";
import { DEFAULT_CONFIG, type GovernanceConfig, loadConfig } from "../../governance/config/config.ts";
import type { AuditSink } from "./audit-sink.ts";
import type { Timers } from "./timers.ts";

/** config_problem audit lines per load; the rest are one summary line. */
export const AUDITED_PROBLEMS = 5;

/** How often the config file is checked for hand edits. */
export const CONFIG_POLL_MS = 2_000;

/**
 * `governance.yaml`, live. Users hand-edit it while OpenCode runs: a changed file (size or mtime, one stat off the
 * hot path) is reloaded within `CONFIG_POLL_MS`; a broken edit is reported and the last good config stays in force.
 */
export class ConfigWatcher {
  #current: GovernanceConfig = DEFAULT_CONFIG;
  #lastGood: GovernanceConfig | undefined;
  #stamp = "";
  #timer: ReturnType<Timers["setInterval"]> | undefined;

  constructor(
    readonly file: string,
    readonly audit: AuditSink,
    readonly timers: Timers,
  ) {}

  get current(): GovernanceConfig {
    return this.#current;
  }

  #guardRoots = false;

  /** The user's own config asks that root sessions' tools be kept from governance's control surfaces too. */
  get guardRoots(): boolean {
    return this.#guardRoots;
  }

  async reload(): Promise<void> {
    const loaded = await loadConfig(this.file, this.#lastGood);
    this.#current = loaded.config;
    this.#guardRoots = loaded.user?.guard?.rootSessions === true;
    if (loaded.source === "file") this.#lastGood = loaded.config;
    this.audit.resize(loaded.config.audit.maxBytes);
    if (loaded.problems.length === 0 && loaded.source === "file") await this.audit.record("config_loaded", { file: this.file, created: loaded.created });
    // A few lines, then one summary: a hostile file must not rotate the user's audit history out (issue 20 §2).
    for (const p of loaded.problems.slice(0, AUDITED_PROBLEMS)) {
      await this.audit.record("config_problem", { file: this.file, message: p.message, line: p.line, column: p.column, source: loaded.source });
    }
    if (loaded.problems.length > AUDITED_PROBLEMS) {
      const more = loaded.problems.length - AUDITED_PROBLEMS;
      await this.audit.record("config_problem", {
        file: this.file,
        message: `…and ${more} more problems (opencode-governance status lists them)`,
        line: null,
        column: null,
        source: loaded.source,
        more,
      });
    }
  }

  #stampNow(): string {
    try {
      const st = statSync(this.file);
      return `${st.mtimeMs}:${st.size}`;
    } catch {
      return "missing";
    }
  }

  watch(): void {
    this.#stamp = this.#stampNow();
    this.#timer = this.timers.setInterval(() => this.check(), CONFIG_POLL_MS);
  }

  /** One poll: reloads when the file changed since the last one. */
  check(): Promise<void> | undefined {
    const now = this.#stampNow();
    if (now === this.#stamp) return undefined;
    this.#stamp = now;
    return this.reload().catch((e) => this.audit.reportError("config-reload", e));
  }

  stop(): void {
    this.timers.clear(this.#timer);
  }
}
