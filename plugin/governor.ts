import type { PluginInput } from "@opencode-ai/plugin";
import { statSync } from "node:fs";
import { AuditEventType, AuditLog } from "../governance/storage/audit-log.ts";
import { systemClock, type Clock } from "../governance/time/clock.ts";
import { DEFAULT_CONFIG, loadConfig, type GovernanceConfig } from "../governance/config/config.ts";
import { ensureGovernanceDir, type GovernancePaths } from "../governance/storage/governance-paths.ts";
import type { StoreProblem } from "../governance/storage/quarantine.ts";
import { isSessionId, type SessionRecord } from "../governance/session/session-record.ts";
import { SessionStore } from "../governance/storage/session-store.ts";
import { transition, type Effect, type SessionEvent } from "../governance/session/session-machine.ts";
import type { OrphanNote } from "../governance/texts/governance-prefix.ts";
import { checkOrphans } from "./orphan-check.ts";
import { createOpencodeApi, type OpencodeApi } from "./opencode-api.ts";

/** How often the config file is checked for hand edits. */
const CONFIG_POLL_MS = 2_000;

/** How long hot-path changes (model steps, tool calls) may wait in memory before they are written. */
const WRITE_BEHIND_MS = 1_000;

export type GovernorOptions = { clock?: Clock; api?: OpencodeApi };

/**
 * One plugin instance's state (never module globals: one `opencode serve` may host several projects).
 * Holds the in-memory view the hot path needs — which sessions this process has seen, which are busy, which have
 * directives waiting — and applies session-machine transitions to the durable store.
 */
export class Governor {
  readonly directory: string;
  readonly clock: Clock;
  readonly store: SessionStore;
  readonly paths: GovernancePaths;
  audit: AuditLog;
  readonly api: OpencodeApi;
  config: GovernanceConfig = DEFAULT_CONFIG;
  /** The last config read from the file without problems; kept when a later edit breaks it. */
  #lastGood: GovernanceConfig | undefined;
  /** Sessions this process has handled; first activity of any other session with a record on disk is a resume. */
  readonly seen = new Set<string>();
  /** Latest `session.status` per session (absent = idle). */
  readonly status = new Map<string, string>();
  /** Sessions that have directives queued (filled by the watcher and by this process's own enqueues). */
  readonly pending = new Set<string>();
  /** Notes for the result of one tool call (by call id), e.g. the log-only delegation note. */
  readonly callNotes = new Map<string, string>();
  /** Sessions whose automatic compaction was already recorded by the autocontinue hook (see `markAutoCompaction`). */
  readonly compactedByHook = new Set<string>();
  /** Agents the host offers no `task` tool (filled by the `config` hook); the texts call them LEAF, not DELEGATING. */
  readonly agentsWithoutTask = new Set<string>();
  readonly #firstSeen = new Map<string, Promise<SessionRecord | undefined>>();
  readonly #reported = new Set<string>();

  constructor(input: Pick<PluginInput, "directory" | "client">, options: GovernorOptions = {}) {
    this.directory = input.directory;
    this.clock = options.clock ?? systemClock;
    this.api = options.api ?? createOpencodeApi(input.client, input.directory);
    const onProblem = (p: StoreProblem) => this.#problem(p);
    this.store = new SessionStore({ projectDir: this.directory, clock: this.clock, onProblem });
    this.paths = this.store.paths;
    this.audit = this.#auditLog(DEFAULT_CONFIG.audit.maxBytes);
  }

  #auditLog(maxBytes: number): AuditLog {
    return new AuditLog({ paths: this.paths, clock: this.clock, maxBytes, onProblem: (p) => this.#problem(p) });
  }

  /** Creates the git-ignored state folder first, then config (created with defaults if missing), then sweeps. */
  async start(): Promise<void> {
    const began = performance.now();
    await ensureGovernanceDir(this.paths);
    await this.reloadConfig();
    const archived = await this.store.archiveStale(this.config.resume.maxIdle);
    const startupMs = Math.round(performance.now() - began);
    await this.record("plugin_started", { directory: this.directory, archived: archived.length, pid: process.pid, startupMs });
    this.#watchConfig();
  }

  #configTimer: ReturnType<typeof setInterval> | undefined;
  #configStamp = "";

  /**
   * Users hand-edit `governance.yaml` while OpenCode runs: a changed file is reloaded within `CONFIG_POLL_MS`
   * (a stat, off the hot path); a broken edit is reported and the last good config stays in force.
   */
  #watchConfig(): void {
    const stamp = () => {
      try {
        const st = statSync(this.paths.configFile);
        return `${st.mtimeMs}:${st.size}`;
      } catch {
        return "missing";
      }
    };
    this.#configStamp = stamp();
    this.#configTimer = setInterval(() => {
      const now = stamp();
      if (now === this.#configStamp) return;
      this.#configStamp = now;
      void this.reloadConfig().catch((e) => this.reportHookError("config-reload", e));
    }, CONFIG_POLL_MS);
    this.#configTimer.unref?.();
  }

  stopWatching(): void {
    clearInterval(this.#configTimer);
  }

  async reloadConfig(): Promise<void> {
    const loaded = await loadConfig(this.paths.configFile, this.#lastGood);
    this.config = loaded.config;
    if (loaded.source === "file") this.#lastGood = loaded.config;
    if (loaded.config.audit.maxBytes !== this.audit.maxBytes) this.audit = this.#auditLog(loaded.config.audit.maxBytes);
    if (loaded.problems.length === 0 && loaded.source === "file") await this.record("config_loaded", { file: this.paths.configFile, created: loaded.created });
    for (const p of loaded.problems) {
      await this.record("config_problem", { file: this.paths.configFile, message: p.message, line: p.line, column: p.column, source: loaded.source });
    }
  }

  readonly #inFlight = new Set<Promise<unknown>>();

  /** Appends to the audit log; never throws. Tracked so `flush` can wait for it when OpenCode shuts down. */
  async record(type: AuditEventType, data: Record<string, unknown> = {}): Promise<void> {
    const p = this.audit.append(type, data);
    this.#inFlight.add(p);
    try {
      await p;
    } finally {
      this.#inFlight.delete(p);
    }
  }

  /** Records an audit event named by the pure core (an effect); a name missing from the enum is itself reported. */
  async recordEffect(name: string, data: Record<string, unknown>): Promise<void> {
    const type = AuditEventType.safeParse(name);
    if (type.success) await this.record(type.data, data);
    else await this.record("hook_error", { hook: "audit", message: `unknown audit event type ${name}`, ...data });
  }

  reportHookError(hook: string, error: unknown): void {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    void this.record("hook_error", { hook, message: message.slice(0, 500) });
  }

  #problem(p: StoreProblem): void {
    const key = `${p.kind}:${p.file}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    void this.record("store_problem", { ...p });
  }

  /** The record as this process last saw it, pending soft events included (no I/O). */
  peek(sessionId: string): SessionRecord | undefined {
    return this.#views.get(sessionId) ?? this.store.peek(sessionId);
  }

  /**
   * Called on every activity of a session. The first time this process sees it, the record on disk (if any) decides
   * between a new session, a continuation, a resume (1 h–48 h idle or interrupted) and an expired one (> 48 h).
   * Concurrent first activities of one session share one promise.
   */
  ensureSeen(sessionId: string, agent?: string | null): Promise<SessionRecord | undefined> {
    if (!isSessionId(sessionId)) return Promise.resolve(undefined);
    const existing = this.#firstSeen.get(sessionId);
    if (existing) return existing;
    this.seen.add(sessionId);
    const p = this.#firstActivity(sessionId, agent ?? null);
    this.#firstSeen.set(sessionId, p);
    return p;
  }

  async #firstActivity(sessionId: string, agent: string | null): Promise<SessionRecord | undefined> {
    const onDisk = await this.store.read(sessionId);
    let parent: { parentId: string | null; agent: string | null } | undefined;
    let parentRecord: SessionRecord | undefined;
    if (!onDisk) {
      parent = await this.api.parentOf(sessionId);
      if (parent?.parentId) parentRecord = await this.store.read(parent.parentId);
    }
    const record = await this.apply(sessionId, {
      type: "first_seen",
      at: this.clock.now(),
      agent: agent ?? parent?.agent ?? null,
      ...(parent ? { parentId: parent.parentId && isSessionId(parent.parentId) ? parent.parentId : null } : {}),
      ...(parentRecord ? { parentRecord: { depth: parentRecord.depth, rootId: parentRecord.rootId } } : {}),
    });
    if (record && record.children.length > 0) await checkOrphans(this, record);
    return record;
  }

  /**
   * `session.created` arrived in this process. Registered synchronously, before any await, so a hook of the same
   * session that races the event (chat.message, transforms) waits for this record instead of synthesizing a resume.
   */
  created(sessionId: string, create: () => Promise<SessionRecord | undefined>): Promise<SessionRecord | undefined> {
    this.seen.add(sessionId);
    const p = create();
    this.#firstSeen.set(sessionId, p);
    return p;
  }

  /** Soft events not yet written, per session, in order; and the in-memory record they produced. */
  readonly #pendingEvents = new Map<string, SessionEvent[]>();
  readonly #views = new Map<string, SessionRecord>();
  readonly #flushTimers = new Map<string, ReturnType<typeof setTimeout>>();

  #ctx(sessionId: string) {
    return { sessionId, config: { minIdleMs: this.config.resume.minIdle, maxIdleMs: this.config.resume.maxIdle } };
  }

  /**
   * Applies one machine event, then carries out its effects. An illegal transition is logged, not thrown.
   *
   * Hot-path events (`soft`: a model step, a tool call) only move counters, timestamps and the last tool call, so they
   * are applied in memory and written behind, batched with the next durable change or within `WRITE_BEHIND_MS`.
   * Every other event is written at once (read-modify-write under the store's lock), replaying pending soft events
   * first. Losing a second of counters in a crash is the tradeoff for one durable write per session per second
   * instead of several per step (OpenCode awaits these hooks on every step).
   */
  async apply(sessionId: string, event: SessionEvent, opts: { soft?: boolean } = {}): Promise<SessionRecord | undefined> {
    const base = opts.soft ? this.peek(sessionId) : undefined;
    if (base) {
      const result = transition(base, event, this.#ctx(sessionId));
      if (result.illegal) return base;
      this.#views.set(sessionId, result.next!);
      this.#pendingEvents.set(sessionId, [...(this.#pendingEvents.get(sessionId) ?? []), event]);
      this.#scheduleFlush(sessionId);
      for (const effect of result.effects) await this.#effect(sessionId, effect, base, result.next);
      return result.next;
    }
    let effects: Effect[] = [];
    let previous: SessionRecord | undefined;
    const next = await this.update(sessionId, (current) => {
      previous = current;
      const result = transition(current, event, this.#ctx(sessionId));
      effects = result.effects;
      if (result.illegal) effects = [{ type: "audit", event: "illegal_transition", data: { event: event.type, reason: result.illegal.reason } }];
      return result.next;
    });
    for (const effect of effects) await this.#effect(sessionId, effect, previous, next);
    return next;
  }

  /**
   * The one way the plugin changes a record: pending soft events are replayed first (their effects already ran),
   * then `fn`, in one locked read-modify-write.
   */
  async update(sessionId: string, fn: (current: SessionRecord | undefined) => SessionRecord | undefined): Promise<SessionRecord | undefined> {
    const pending = this.#pendingEvents.get(sessionId) ?? [];
    this.#pendingEvents.delete(sessionId);
    clearTimeout(this.#flushTimers.get(sessionId));
    this.#flushTimers.delete(sessionId);
    try {
      return await this.store.update(sessionId, (current) => {
        let r = current;
        for (const e of pending) r = transition(r, e, this.#ctx(sessionId)).next;
        return fn(r) ?? r;
      });
    } finally {
      this.#views.delete(sessionId);
    }
  }

  #scheduleFlush(sessionId: string): void {
    if (this.#flushTimers.has(sessionId)) return;
    const timer = setTimeout(() => {
      this.#flushTimers.delete(sessionId);
      void this.update(sessionId, (r) => r).catch((e) => this.reportHookError("write-behind", e));
    }, WRITE_BEHIND_MS);
    timer.unref?.();
    this.#flushTimers.set(sessionId, timer);
  }

  /** Writes every pending soft event and waits for audit lines in flight (OpenCode's `dispose`). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.#pendingEvents.keys()].map((id) => this.update(id, (r) => r)));
    await Promise.allSettled([...this.#inFlight]);
  }

  async #effect(sessionId: string, effect: Effect, previous: SessionRecord | undefined, next: SessionRecord | undefined): Promise<void> {
    switch (effect.type) {
      case "audit":
        if (effect.event === "illegal_transition" && effect.data.event === "tool_after") return;
        await this.recordEffect(effect.event, { sessionId, ...effect.data });
        return;
      case "archive_previous":
        if (previous) await this.record("session_expired", { sessionId, lastActivityAt: previous.lastActivityAt });
        return;
      case "interrupt_descendants":
        await this.onInterrupted?.(sessionId);
        return;
      case "resume_context":
        if (!effect.allowed) await this.record("resume_context_skipped", { sessionId, level: next?.level, rule: "S5-R08" });
        return;
    }
  }

  /** Keeps the last three governance-relevant actions of a session (S2-R03: they survive compaction). */
  async remember(sessionId: string, action: string): Promise<void> {
    await this.update(sessionId, (r) => (r ? { ...r, recentActions: [...r.recentActions, action.slice(0, 200)].slice(-3) } : r));
  }

  /**
   * A child's task ended (completed, failed or aborted): the parent's link is closed and a still-active child is
   * marked completed, so no bookkeeping leaks whatever the exit path. Idempotent.
   */
  async closeChild(parentId: string, childId: string, outcome: "completed" | "aborted" | "failed"): Promise<void> {
    const at = this.clock.now();
    let closed = false;
    if (isSessionId(parentId)) {
      await this.update(parentId, (p) => {
        if (!p) return p;
        const link = p.children.find((c) => c.sessionId === childId);
        if (!link || link.closedAt !== null) return p;
        closed = true;
        return { ...p, children: p.children.map((c) => (c.sessionId === childId ? { ...c, closedAt: at, outcome: c.outcome === "running" ? outcome : c.outcome } : c)) };
      });
    }
    await this.update(childId, (c) => (c && c.control === "active" && outcome === "completed" ? { ...c, control: "completed" } : c));
    if (closed) await this.record("child_closed", { sessionId: parentId, childId, outcome });
  }

  /** Orphaned children found when this session started or resumed, for its governance prefix. */
  readonly orphans = new Map<string, OrphanNote[]>();
  orphanNotes(sessionId: string): OrphanNote[] {
    return this.orphans.get(sessionId) ?? [];
  }

  /** Set by the stop controller: runs when a session was aborted (interrupt its running descendants). */
  onInterrupted?: (sessionId: string) => Promise<void>;
  /** Set by the stop controller: a stopped session made another tool call (refused); abort it now. */
  onBlockedCall?: (sessionId: string) => void;
}
