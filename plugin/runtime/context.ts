import { randomBytes } from "node:crypto";
import type { GovernanceConfig } from "../../governance/config/config.ts";
import type { HostAgentSettings } from "../../governance/config/project-agents.ts";
import { type AgentView, agentView } from "../../governance/delegation/agent-view.ts";
import type { AuditEventType, AuditLog } from "../../governance/storage/audit-log.ts";
import type { GovernancePaths } from "../../governance/storage/governance-paths.ts";
import type { SessionStore } from "../../governance/session/session-store.ts";
import type { Clock } from "../../governance/time/clock.ts";
import fs from "node:fs";
import path from "node:path";
import { keyFile, loadKey } from "../../governance/storage/directive-signing.ts";
import { type ControlSurfaces, controlSurfaces } from "../../governance/stop/control-surface.ts";
import { type KeyForms, keyForms } from "../../governance/texts/key-redaction.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { directiveSeal } from "../../governance/texts/directive-seal.ts";
import { type RecordTrust, recordTrust } from "../../governance/storage/record-attestation.ts";
import type { AuditSink } from "./audit-sink.ts";
import { Confinement } from "./confinement.ts";
import type { ConfigWatcher } from "./config-watcher.ts";
import type { HostApi } from "./host-api.ts";
import type { Timers } from "./timers.ts";

/** How many sessions' seals {@link PluginContext.sealOf} keeps computed. */
const SEALS_KEPT = 512;

/**
 * What every part of the plugin reads: the project, the clock and timers, the files, the SDK, the live config and
 * the audit log. No field is reassigned, and records change only through the session runtime's steps
 * (plugin/sessions/session-runtime.ts). What does change, and why: the host's facts about its agents
 * (`agentsWithoutTask`, `hostAgents`), written by the adapters' config hooks when the host tells them (OpenCode 1 once at
 * start, OpenCode 2 per request) and read by every text and the spawn gate; the config, as the watcher reloads it; and
 * caches filled on first use (seals, control surfaces, the sandbox, the key's forms).
 */
export class PluginContext {
  /** Agents the host offers no `task` tool (learned by the `config` hook); the texts call them LEAF, not DELEGATING. */
  readonly agentsWithoutTask = new AgentNames();
  /**
   * The agents the host configured, as its settings say (OpenCode 1's `config` hook): the refusal of an agent the
   * config does not name gives the lines to add from them (docs/decisions/0030-project-agents-named.md).
   */
  readonly hostAgents = new Map<string, HostAgentSettings>();

  constructor(
    readonly directory: string,
    readonly clock: Clock,
    readonly timers: Timers,
    readonly store: SessionStore,
    readonly api: HostApi,
    readonly sink: AuditSink,
    readonly configWatcher: ConfigWatcher,
  ) {}

  get paths(): GovernancePaths {
    return this.store.paths;
  }

  get config(): GovernanceConfig {
    return this.configWatcher.current;
  }

  /**
   * Who `agent` at `depth` is, as every text states it: the core's one view ({@link agentView}) with what the host
   * said about its agents. The prefix, the task block, the reminder and the compaction context all come from here.
   */
  viewOf(agent: string | null | undefined, depth: number): AgentView {
    return agentView({ agent, depth }, this.config, { lacksTask: (name) => this.agentsWithoutTask.has(name) });
  }

  #sealKey: Buffer | undefined;
  #trust: RecordTrust | undefined;

  /** Attests the records of sessions OpenCode shows this process (governance/storage/record-attestation.ts). */
  get trust(): RecordTrust {
    this.#trust ??= recordTrust();
    return this.#trust;
  }

  /**
   * The session's directive seal (governance/texts/directive-seal.ts), derived from the per-user key outside the
   * project (read once per process, then cached; an HMAC of a few µs per call, nothing stored). No usable key: a
   * random key for this process, so directives are still sealed, only not the same after a restart.
   */
  sealOf(sessionId: string): string {
    const known = this.#seals.get(sessionId);
    if (known !== undefined) return known;
    if (!this.#sealKey) {
      const key = loadKey();
      this.#sealKey = key.ok ? key.key : randomBytes(32);
    }
    // An HMAC per session, not per call: the prefix, every tool result and every directive ask for it (issue 31).
    // Bounded: a long-lived process computes a forgotten session's seal again if it ever needs it.
    if (this.#seals.size >= SEALS_KEPT) this.#seals.clear();
    const seal = directiveSeal(this.#sealKey, sessionId);
    this.#seals.set(sessionId, seal);
    return seal;
  }

  readonly #seals = new Map<string, string>();

  #surfaces: ControlSurfaces | undefined;
  #keyForms: KeyForms | null | undefined;

  /**
   * Governance's control surfaces as tool arguments could name them (governance/stop/control-surface.ts): built once,
   * real paths resolved once here, so the per-call check does no I/O.
   */
  get surfaces(): ControlSurfaces {
    if (!this.#surfaces) {
      const keyDir = path.dirname(keyFile());
      const real = (p: string) => {
        try {
          return fs.realpathSync(p);
        } catch {
          return undefined;
        }
      };
      const realPaths = [real(keyDir), real(this.paths.root)].filter((p): p is string => p !== undefined);
      this.#surfaces = controlSurfaces({
        projectDir: this.directory,
        keyDir,
        stateDir: this.paths.root,
        configFile: this.paths.configFile,
        realPaths: realPaths.filter((p) => p !== keyDir && p !== this.paths.root),
      });
    }
    return this.#surfaces;
  }

  #confinement: Confinement | undefined;

  /** The shell sandbox and the file tools' protected set (issue 41): built on first use, from this user's environment. */
  get confinement(): Confinement {
    this.#confinement ??= new Confinement(this.directory);
    return this.#confinement;
  }

  /** The key's printable forms, for redaction in every tool result (governance/texts/key-redaction.ts); null without a key. */
  get keyForms(): KeyForms | null {
    if (this.#keyForms === undefined) {
      const key = loadKey();
      this.#keyForms = key.ok ? keyForms(key.key) : null;
    }
    return this.#keyForms;
  }

  /** Whether a session's tools are kept from the control surfaces: every subagent; a root only if the user's config says so. */
  guarded(record: Pick<SessionRecord, "parentId">): boolean {
    return record.parentId !== null || this.configWatcher.guardRoots;
  }

  get audit(): AuditLog {
    return this.sink.log;
  }

  record(type: AuditEventType, data: Record<string, unknown> = {}): Promise<void> {
    return this.sink.record(type, data);
  }

  reportHookError(where: string, error: unknown): void {
    this.sink.reportError(where, error);
  }
}

/** A set of agent names that only grows (what the host's config says about its agents). */
export class AgentNames {
  readonly #names = new Set<string>();

  add(name: string): void {
    this.#names.add(name);
  }

  has(name: string): boolean {
    return this.#names.has(name);
  }

  /** The host offers it the delegation tool after all (OpenCode 2 says so per request: plugin/opencode-2/host-facts.ts). */
  delete(name: string): void {
    this.#names.delete(name);
  }
}
