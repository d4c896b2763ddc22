import { claimAll, enqueue, peekAll, type Directive } from "../governance/stop/directive-queue.ts";
import { validateInjectText } from "../governance/texts/inject-sanitizer.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { confirmStopped, onCompliance, onDeadline, onToolResult, startStop, type StopEffect, type StopHow } from "../governance/stop/stop-ladder.ts";
import { buildInjectBlock, buildParentNotification, buildStopDirective } from "../governance/texts/stop-directives.ts";
import type { Governor } from "./governor.ts";
import { QueueWatcher } from "./queue-watcher.ts";

/** Time a terminated session gets to read the ❌ result before the SDK abort. */
const L3_GRACE_MS = 1_500;

const HOW_FOR_PARENT: Record<StopHow, "ladder" | "hard-stop" | "compliance"> = { ladder: "ladder", abort: "hard-stop", compliance: "compliance" };

/**
 * Stop and inject for sessions hosted by this process (seeds 000 and 001): notices requests (watcher + poll),
 * delivers the L1 → L2 → L3 ladder and injected guidance on tool results, aborts through the SDK when the deadline
 * passes without a tool call, confirms the session went idle before recording it stopped, and tells the parent once.
 */
export class StopController {
  readonly #gov: Governor;
  readonly #watcher: QueueWatcher;
  readonly #deadlines = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #idleWaiters = new Map<string, (() => void)[]>();
  readonly #notified = new Set<string>();

  constructor(gov: Governor) {
    this.#gov = gov;
    this.#watcher = new QueueWatcher(gov.paths.queues, (id) => this.#onQueued(id), () => gov.seen);
    gov.onBlockedCall = (id) => this.onBlockedCall(id);
  }

  start(): void {
    this.#watcher.start();
  }

  dispose(): void {
    this.#watcher.stop();
    for (const t of this.#deadlines.values()) clearTimeout(t);
    this.#deadlines.clear();
  }

  /** A queue changed. Only sessions this process hosts are acted on; a stop starts its deadline right away. */
  async #onQueued(sessionId: string): Promise<void> {
    if (!this.#gov.seen.has(sessionId)) return;
    this.#gov.pending.add(sessionId);
    const stops = (await peekAll(this.#gov.paths, sessionId)).filter((d) => d.kind === "stop");
    const record = this.#gov.peek(sessionId);
    if (stops.length > 0 && record?.control === "stopped") return this.#drainStops(sessionId);
    // The poll sees a pending request again every 500 ms until a tool call claims it: begin each request once.
    for (const stop of stops) if (record?.stop?.requestId !== stop.id) await this.#begin(sessionId, stop);
  }

  /** Stop requests that arrive for (or outlive) a stopped session are done with: claimed, so the watcher rests. */
  async #drainStops(sessionId: string): Promise<void> {
    const drained = await claimAll(this.#gov.paths, sessionId, { clock: this.#gov.clock, kinds: ["stop"] });
    if (drained.length > 0) await this.#gov.record("stop_ignored", { sessionId, count: drained.length, because: "already stopped" });
  }

  async #begin(sessionId: string, d: Extract<Directive, { kind: "stop" }>): Promise<void> {
    let effects: StopEffect[] = [];
    const record = await this.#gov.update(sessionId, (r) => {
      if (!r) return r;
      const res = startStop(r, { requestId: d.id, at: this.#gov.clock.now(), level: d.level, reason: d.reason, by: d.by, deadlineMs: this.#gov.config.stop.deadline });
      effects = res.effects;
      return res.next;
    });
    await this.#run(sessionId, effects);
    if (record?.control === "stopping" && record.stop) this.#schedule(sessionId, record.stop.deadlineAt);
  }

  #schedule(sessionId: string, at: number): void {
    clearTimeout(this.#deadlines.get(sessionId));
    const delay = Math.max(0, at - this.#gov.clock.now());
    const timer = setTimeout(() => void this.#deadline(sessionId).catch((e) => this.#gov.reportHookError("stop-deadline", e)), delay);
    timer.unref?.();
    this.#deadlines.set(sessionId, timer);
  }

  /** The hard stop: abort through the SDK, wait for OpenCode to report idle, then record it stopped. */
  async #deadline(sessionId: string): Promise<void> {
    this.#deadlines.delete(sessionId);
    let action: string = "none";
    let effects: StopEffect[] = [];
    const record = await this.#gov.update(sessionId, (r) => {
      if (!r) return r;
      const res = onDeadline(r, this.#gov.clock.now(), { retryDeadlineMs: this.#gov.config.stop.retryDeadline });
      action = res.action;
      effects = res.effects.filter((e) => e.type !== "abort_session");
      return res.next;
    });
    await this.#run(sessionId, effects);
    if (!record) return;
    if (action === "give-up") {
      await this.#gov.api.toast(`Could not stop session ${sessionId}: it is still running after ${record.stop?.abortAttempts ?? 0} aborts.`, "error");
      return;
    }
    if (action !== "abort" && action !== "retry-abort") return;
    if (record.stop) this.#schedule(sessionId, record.stop.deadlineAt);
    // Tell the parent before the abort: its foreground `task` returns "Task cancelled" at once and its next step
    // should already know why. The record says `stopped` only after OpenCode reports the child idle.
    if (record.parentId) await this.#notifyParent(sessionId, record.parentId, "abort");
    await this.#gov.api.abort(sessionId);
    if (await this.#confirmIdle(sessionId, 3_000)) await this.#final(sessionId, "abort");
  }

  /** Resolves true once OpenCode reports the session idle (status events, with the status route as a check). */
  async #confirmIdle(sessionId: string, timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const status = await this.#gov.api.status();
      if (status && !status[sessionId]) return true;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 150);
        const list = this.#idleWaiters.get(sessionId) ?? [];
        list.push(() => (clearTimeout(t), resolve()));
        this.#idleWaiters.set(sessionId, list);
      });
    }
    return false;
  }

  async #final(sessionId: string, how: StopHow): Promise<void> {
    let effects: StopEffect[] = [];
    await this.#gov.update(sessionId, (r) => {
      if (!r) return r;
      const res = how === "compliance" ? onCompliance(r, this.#gov.clock.now()) : confirmStopped(r, this.#gov.clock.now(), how);
      effects = res.effects;
      return res.next;
    });
    clearTimeout(this.#deadlines.get(sessionId));
    this.#deadlines.delete(sessionId);
    await this.#run(sessionId, effects, how);
    await this.#drainStops(sessionId);
  }

  async #run(sessionId: string, effects: StopEffect[], how: StopHow = "ladder"): Promise<void> {
    for (const e of effects) {
      if (e.type === "audit") await this.#gov.recordEffect(e.event, { sessionId, ...e.data });
      else if (e.type === "notify_parent") await this.#notifyParent(sessionId, e.parentId, how);
      else if (e.type === "abort_session") this.#abortSoon(sessionId);
    }
  }

  /**
   * L3: the model first receives the terminated result and may try one more call (refused in tool.execute.before,
   * which aborts at once); otherwise the session is aborted after a short grace, then verified idle.
   */
  #abortSoon(sessionId: string, graceMs = L3_GRACE_MS): void {
    const t = setTimeout(() => {
      void (async () => {
        await this.#gov.api.abort(sessionId);
        if (!(await this.#confirmIdle(sessionId, 3_000))) await this.#gov.api.abort(sessionId);
      })().catch((e) => this.#gov.reportHookError("stop-abort", e));
    }, graceMs);
    t.unref?.();
  }

  /** A stopped session tried another tool call: abort it now. */
  onBlockedCall(sessionId: string): void {
    this.#abortSoon(sessionId, 50);
  }

  async #notifyParent(childId: string, parentId: string, how: StopHow): Promise<void> {
    // One notification per stopped child, however many paths (ladder, hard stop, compliance) report it.
    if (this.#notified.has(childId)) return;
    this.#notified.add(childId);
    const child = this.#gov.peek(childId) ?? (await this.#gov.store.read(childId));
    const text = buildParentNotification({
      childAgent: child?.agent ?? null,
      childSessionId: childId,
      reason: child?.stop?.reason ?? "",
      how: HOW_FOR_PARENT[how],
      lastToolCall: child?.lastToolCall ?? null,
    });
    const res = await enqueue(this.#gov.paths, parentId, { kind: "notify", id: `notify-${childId}`, at: this.#gov.clock.now(), text });
    this.#gov.pending.add(parentId);
    await this.#gov.record("parent_notified", { sessionId: parentId, childId, how, ok: res.ok });
    await this.#gov.api.toast(`Subagent ${child?.agent ?? childId} was stopped.`, "warning");
  }

  onStatus(sessionId: string, status: string): void {
    if (status !== "idle") return;
    for (const wake of this.#idleWaiters.get(sessionId) ?? []) wake();
    this.#idleWaiters.delete(sessionId);
  }

  /** A turn ended while a stop was pending: the session complied (it stopped making tool calls). */
  async onIdle(sessionId: string): Promise<void> {
    this.onStatus(sessionId, "idle");
    const record = this.#gov.peek(sessionId);
    if (record?.control === "stopping") await this.#final(sessionId, "compliance");
  }

  async onAborted(sessionId: string): Promise<void> {
    this.onStatus(sessionId, "idle");
    const record = this.#gov.peek(sessionId);
    if (record?.control === "stopping") await this.#final(sessionId, "abort");
  }

  /**
   * `tool.execute.after`: returns the rewritten output, or undefined to leave it. Stop wins over inject; all pending
   * injects are delivered at once, in order; notifications for this session (a child was stopped) come first.
   */
  async onToolResult(sessionId: string, output: string): Promise<string | undefined> {
    const gov = this.#gov;
    let record: SessionRecord | undefined = gov.peek(sessionId);
    if (!gov.pending.has(sessionId) && record?.control !== "stopping") return undefined;
    gov.pending.delete(sessionId);
    const directives = await claimAll(gov.paths, sessionId, { clock: gov.clock });
    for (const d of directives) if (d.kind === "stop") await this.#begin(sessionId, d);
    const notes = directives.filter((d) => d.kind === "notify").map((d) => d.text);
    const injects = directives.filter((d) => d.kind === "inject");
    record = gov.peek(sessionId);

    let body: string | undefined;
    if (record?.control === "stopping") {
      let level: 1 | 2 | 3 | undefined;
      let effects: StopEffect[] = [];
      record = await gov.update(sessionId, (r) => {
        if (!r) return r;
        const res = onToolResult(r, gov.clock.now());
        if (res.action.kind === "deliver") level = res.action.level;
        effects = res.effects;
        return res.next;
      });
      await this.#run(sessionId, effects, "ladder");
      if (level) body = buildStopDirective({ level, sessionId, reason: record?.stop?.reason ?? "", ...(level === 1 ? { originalOutput: output } : {}) });
      if (injects.length > 0) await gov.record("inject_dropped", { sessionId, count: injects.length, because: "stop wins over inject" });
    } else if (injects.length > 0) {
      // Validated again on delivery: a queue file may have been written by hand or by an older version.
      const checked = injects.map((d) => validateInjectText(d.text, { maxLength: gov.config.inject.maxLength }));
      const texts = checked.filter((c) => c.valid).map((c) => c.sanitized);
      if (texts.length > 0) body = buildInjectBlock(texts) + output;
      for (const d of injects) await gov.record("session_injected", { sessionId, injectId: d.id, preview: d.text.slice(0, 60), by: d.by });
    }
    if (notes.length === 0) return body;
    return `${notes.join("\n\n")}\n\n${body ?? output}`;
  }

  /** Notifications only (for the model-step path): stop and inject directives stay queued for tool results. */
  async takeNotifications(sessionId: string): Promise<string[]> {
    if (!this.#gov.pending.has(sessionId)) return [];
    const notes = await claimAll(this.#gov.paths, sessionId, { clock: this.#gov.clock, kinds: ["notify"] });
    return notes.flatMap((d) => (d.kind === "notify" ? [d.text] : []));
  }

  /** A request was just queued by this process (a governance tool): act on it without waiting for the watcher. */
  async poke(sessionId: string): Promise<void> {
    await this.#onQueued(sessionId);
  }
}
