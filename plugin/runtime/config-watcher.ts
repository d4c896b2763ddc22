import { statSync } from "node:fs";
import {
  DEFAULT_CONFIG,
  DEFAULT_CONFIG_YAML,
  type GovernanceConfig,
  type LastGood,
  type LoadedConfig,
  loadConfig,
  MAX_CONFIG_BYTES,
} from "../../governance/config/config.ts";
import { agentsToName, generatedConfigYaml, type HostAgentSettings } from "../../governance/config/project-agents.ts";
import { writeFileAtomic } from "../../governance/storage/atomic-write.ts";
import { readRegularFile } from "../../governance/storage/safe-fs.ts";
import { orgPolicyFile } from "../../governance/config/org-policy.ts";
import { userConfigFile } from "../../governance/config/user-config.ts";
import type { AuditSink } from "./audit-sink.ts";
import type { Timers } from "./timers.ts";

/** config_problem audit lines per load; the rest are one summary line. */
export const AUDITED_PROBLEMS = 5;

/** How often the config file is checked for hand edits. */
export const CONFIG_POLL_MS = 2_000;

/** Refusals listed in one `policy_ceiling` audit line (the rest are counted; `status --explain` lists them all). */
export const AUDITED_REFUSALS = 20;

/**
 * The three config files, live: the project's `governance.yaml`, the user's own and the organisation's policy (issue
 * 30). Users hand-edit them while OpenCode runs: a change to any of them (size or mtime, three stats off the hot path)
 * reloads all within `CONFIG_POLL_MS`; a broken edit is reported and the last good file stays in force (for the
 * organisation's, fail closed: see org-policy.ts). Refused loosenings are audited `policy_ceiling`, once per load.
 */
export class ConfigWatcher {
  #current: GovernanceConfig = DEFAULT_CONFIG;
  #loaded: LoadedConfig | undefined;
  #lastGood: LastGood = {};
  #stamp = "";
  readonly #env: NodeJS.ProcessEnv;
  #timer: ReturnType<Timers["setInterval"]> | undefined;

  /** Shows a line to the user (OpenCode's toast); set by the runtime once its host port exists. */
  notify: (message: string) => void = () => undefined;

  constructor(
    readonly file: string,
    readonly audit: AuditSink,
    readonly timers: Timers,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.#env = env;
  }

  get current(): GovernanceConfig {
    return this.#current;
  }

  #guardRoots = false;

  /** The user's own config asks that root sessions' tools be kept from governance's control surfaces too. */
  get guardRoots(): boolean {
    return this.#guardRoots;
  }

  /** The last load: which layer set what (`governance` tool, tests). */
  get loaded(): LoadedConfig | undefined {
    return this.#loaded;
  }

  /** This process wrote the file with the defaults (its first start in the project): the host's agents may be added once. */
  #generated = false;

  /**
   * Names the host's own agents in the file this process just generated (docs/decisions/0030-project-agents-named.md):
   * OpenCode 1 reports its agents in the `config` hook, after the start wrote the defaults. Only a file still exactly
   * as generated is rewritten (a user's edit is never touched), and only once. Returns the names added.
   */
  async nameAgents(agents: readonly HostAgentSettings[]): Promise<string[]> {
    if (!this.#generated) return [];
    this.#generated = false;
    const names = agentsToName(agents).map((a) => a.name);
    if (names.length === 0) return [];
    if ((await readRegularFile(this.file, MAX_CONFIG_BYTES)) !== DEFAULT_CONFIG_YAML) return [];
    await writeFileAtomic(this.file, generatedConfigYaml(agents));
    await this.reload();
    return names;
  }

  async reload(): Promise<void> {
    const loaded = await loadConfig(this.file, this.#lastGood, this.#env);
    if (loaded.created) this.#generated = true;
    this.#loaded = loaded;
    this.#current = loaded.config;
    this.#guardRoots = loaded.user?.guard?.rootSessions === true;
    this.#lastGood = loaded.lastGood;
    this.audit.resize(loaded.config.audit.maxBytes);
    // A ceiling file removed, broken or loosened while OpenCode runs is not obeyed here (governance/config/ceiling-hold.ts).
    for (const k of loaded.kept) {
      await this.audit.record("ceiling_kept", { layer: k.layer, file: k.file, reason: k.why, paths: k.paths.slice(0, 20) });
      const what = k.why === "loosened" ? `loosens ${k.paths.slice(0, 3).join(", ")}` : k.why === "missing" ? "was removed" : "is broken";
      this.notify(
        `Governance: the ${k.layer === "user" ? "user's" : "organisation's"} ceilings file ${what}; the last good ceilings stay in force until OpenCode restarts`,
      );
    }
    const { refused } = loaded.policy;
    const others = loaded.problems.filter((p) => !refused.some((r) => r.message === p.message));
    if (others.length === 0 && loaded.source === "file") await this.audit.record("config_loaded", { file: this.file, created: loaded.created });
    if (refused.length > 0) {
      await this.audit.record("policy_ceiling", {
        file: this.file,
        count: refused.length,
        refused: refused
          .slice(0, AUDITED_REFUSALS)
          .map((r) => ({ path: r.path, layer: r.layer, value: r.value, ceiling: r.ceiling, ceilingLayer: r.ceilingLayer })),
        org: loaded.policy.org.source,
      });
    }
    // A few lines, then one summary: a hostile file must not rotate the user's audit history out (issue 20 §2).
    for (const p of others.slice(0, AUDITED_PROBLEMS)) {
      await this.audit.record("config_problem", { file: this.file, message: p.message, line: p.line, column: p.column, source: loaded.source });
    }
    if (others.length > AUDITED_PROBLEMS) {
      const more = others.length - AUDITED_PROBLEMS;
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
    return [this.file, userConfigFile(this.#env), orgPolicyFile(this.#env)]
      .map((file) => {
        try {
          const st = statSync(file);
          return `${st.mtimeMs}:${st.size}:${st.mode}:${st.uid}`;
        } catch {
          return "missing";
        }
      })
      .join("|");
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
