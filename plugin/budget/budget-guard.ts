import { type BudgetStepResult, budgetStep, budgetStopStands, treeStopOrder } from "../../governance/budget/budget-step.ts";
import type { MessageUse } from "../../governance/session/budget-state.ts";
import * as U from "../../governance/budget/budget-usage.ts";
import type { LoopCallKey, LoopState } from "../../governance/budget/loop-guard.ts";
import { loopKeyFor, watchLoop } from "../../governance/budget/loop-watch.ts";
import { RunningSubagents } from "./running-subagents.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { standDownNotice } from "./stand-down-notice.ts";
import { SpendGuard } from "./spend-guard.ts";
import { beginGovernanceStop } from "./governance-stop.ts";
import type { BudgetNotices } from "../../governance/stop/delivery-plan.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { StopController } from "../stop/stop-controller.ts";

type Scope = readonly ["session" | "tree", string]; // a budget scope and the record it is kept on
/**
 * Budgets, concurrency limits and loop guards for the sessions this process hosts (docs/budgets.md). Every decision
 * is a pure step of governance/budget/ (`budgetStep`, `treeStopOrder`, `watchLoop`, `decideConcurrentSpawn`); this
 * adapter keeps the little per-session memory they need (loop state, pending notices, running subagents), feeds them
 * OpenCode's signals and the sessions it hosts, and runs what they return. Hot-path work (every tool call,
 * model step and usage event) is O(1) and writes nothing at once: records change through `softStep` (written behind).
 */
export class BudgetGuard {
  readonly #runner: EffectRunner;
  readonly #stops: StopController;
  /** Notices for a session's next tool result (`#notice`). */
  readonly #notices = new Map<string, string[]>();
  readonly #loops = new Map<string, LoopState>();
  /** The loop guard's key of each tool call (normalised argument digest, start time), from `before` to `after`. */
  readonly #callArgs = new Map<string, LoopCallKey>();
  /**
   * Busy before its record existed: OpenCode 1 calls the event hook without waiting, so a new session's first
   * `busy` can arrive while its `session.created` is still writing the record. Applied when the record is there.
   */
  readonly #busyBeforeRecord = new Map<string, number>();
  readonly running: RunningSubagents;

  /** Caps over days and weeks (issue 44), fed every use this guard counts. */
  readonly spend: SpendGuard;

  constructor(runner: EffectRunner, stops: StopController, tracker: SessionTracker) {
    this.#runner = runner;
    this.#stops = stops;
    this.running = new RunningSubagents(runner);
    this.spend = new SpendGuard(runner, tracker, stops);
  }

  get #ctx() {
    return this.#runner.ctx;
  }

  /** Per-session memory, for the soak test: none of it may grow with ended sessions. */
  sizes(): Record<string, number> {
    return {
      budgetNotices: this.#notices.size,
      loopStates: this.#loops.size,
      loopCalls: this.#callArgs.size,
      early: this.#busyBeforeRecord.size,
      ...this.running.sizes(),
    };
  }

  /** A tool call was counted (the machine's soft `tool_before`): the tree counts it too; budgets are checked. */
  onToolCall(sessionId: string, record: SessionRecord, tool: string, callId: string, args: unknown): Promise<void> | undefined {
    const key = loopKeyFor(this.#ctx.config.loops, { tool, args, at: this.#ctx.clock.now(), cwd: this.#ctx.directory });
    if (key) this.#callArgs.set(callId, key);
    this.#count(record, { toolCalls: 1 });
    return this.#check(sessionId);
  }

  /** One model request of the session (the machine's soft `model_step`). */
  async onModelStep(sessionId: string, record: SessionRecord): Promise<void> {
    this.#count(record, { modelRequests: 1 });
    await this.#check(sessionId);
  }

  /** OpenCode's running token and cost totals for a session (`session.updated`). */
  onReportedUse(sessionId: string, reported: U.ReportedUse): Promise<void> | undefined {
    return this.#takeUse(sessionId, (r) => U.takeReportedUse(r, reported));
  }

  /** One assistant message's own tokens and cost (`message.updated`). */
  onMessageUse(sessionId: string, message: MessageUse): Promise<void> | undefined {
    return this.#takeUse(sessionId, (r) => U.takeMessageUse(r, message));
  }

  #takeUse(sessionId: string, take: (r: SessionRecord) => { next: SessionRecord; delta: U.UseDelta }): Promise<void> | undefined {
    let delta: U.UseDelta = {};
    const applied = this.#runner.sessions.softStep(sessionId, (r) => {
      const taken = take(r);
      delta = taken.delta;
      return { next: taken.next, effects: [] };
    });
    if (!applied || applied.next === applied.previous) return;
    this.#count(applied.next as SessionRecord, delta);
    return this.#check(sessionId);
  }

  /** `session.status`: active time, and which subagents are running. */
  onStatus(sessionId: string, status: string): Promise<void> | undefined {
    const busy = status !== "idle";
    const at = this.#ctx.clock.now();
    const applied = this.#runner.sessions.softStep(sessionId, (r) => ({ next: U.markBusy(r, busy, at), effects: [] }));
    if (!applied) {
      if (busy) this.#busyBeforeRecord.set(sessionId, at);
      else this.#busyBeforeRecord.delete(sessionId);
    }
    const record = applied?.next;
    if (record?.parentId) {
      if (busy) this.running.started(sessionId, record.parentId, record.agent, false);
      else this.running.ended(sessionId);
    }
    if (!busy) {
      // Its turn is over: no `task` call of it is still starting a child.
      this.running.turnEnded(sessionId);
      this.#loops.delete(sessionId);
      this.#notices.delete(sessionId);
    } else if (record) return this.#check(sessionId);
  }

  /** A child session was created: it is running, and one pending spawn of its parent became it. */
  onCreated(sessionId: string, parentId: string | null, agent: string | null): void {
    if (parentId) this.running.started(sessionId, parentId, agent, true);
    const busySince = this.#busyBeforeRecord.get(sessionId);
    if (busySince === undefined) return;
    this.#busyBeforeRecord.delete(sessionId);
    this.#runner.sessions.softStep(sessionId, (r) => ({ next: U.markBusy(r, true, busySince), effects: [] }));
  }

  /** The session ended its turn or was aborted: its per-turn memory goes. */
  onEnded(sessionId: string): void {
    this.running.ended(sessionId);
    this.running.turnEnded(sessionId);
    this.#loops.delete(sessionId);
    this.#notices.delete(sessionId);
  }

  /**
   * `tool.execute.after`, before directives are delivered: the loop guard sees the call and its result (a loop's
   * stop starts here, so its L1 rides on this very result). Returns the notices this result carries; where they go is
   * the tool-result plan's (governance/stop/delivery-plan.ts).
   */
  async onToolResult(sessionId: string, tool: string, callId: string, output: string): Promise<BudgetNotices> {
    this.running.callEnded(callId);
    const call = this.#callArgs.get(callId);
    this.#callArgs.delete(callId);
    const { config, clock } = this.#ctx;
    const control = this.#runner.sessions.peek(sessionId)?.control;
    const watch = watchLoop(this.#loops.get(sessionId), { control, call, tool, output, at: clock.now() }, config.loops);
    if (watch.next) this.#loops.set(sessionId, watch.next);
    if (watch.effects.length > 0) await this.#runner.run(sessionId, watch.effects);
    if (watch.stop) await beginGovernanceStop(this.#stops, clock.now(), sessionId, watch.stop);
    const budget = [...(this.#notices.get(sessionId) ?? []), ...this.spend.take(sessionId)];
    this.#notices.delete(sessionId);
    const standDown = (await standDownNotice(this.#runner, sessionId)) ?? null;
    return { standDown, budget, loop: watch.notice };
  }

  /** Adds a session's use to its tree's totals, on the root's record (in memory, written behind), and to the spend ledgers. */
  #count(record: SessionRecord, delta: U.UseDelta): void {
    this.#runner.sessions.softStep(record.rootId, (root) => ({ next: U.addTreeUse(root, delta), effects: [] }));
    this.spend.record(record.sessionId, delta);
  }

  /**
   * The session's own budgets, then its tree's (`budgetStep` on each scope's record). Most checks find nothing to do
   * and are done at once (no promise: this runs on usage events, several a step); from the first scope with effects
   * or a stop on, the work is awaited in order, as it always was.
   */
  #check(sessionId: string): Promise<void> | undefined {
    const record = this.#runner.sessions.peek(sessionId);
    if (!record) return;
    const at = this.#ctx.clock.now();
    const scopes: Scope[] = [
      ["session", sessionId],
      ["tree", record.rootId],
    ];
    for (const [i, scope] of scopes.entries()) {
      const res = this.#checkScope(record, scope, at);
      if (res && (res.effects.length > 0 || res.stop)) return this.#act(sessionId, record, scopes.slice(i), at, res);
      if (res) this.#notice(sessionId, res.notices);
    }
  }

  /** One scope's check, applied in memory (written behind). */
  #checkScope(record: SessionRecord, [scope, recordId]: Scope, at: number): BudgetStepResult | undefined {
    return this.#runner.sessions.softStep(recordId, (r) => budgetStep(r, { type: "check", scope, by: record, at }, this.#ctx.config));
  }

  /** From a scope with work on: its effects (audit lines, toasts), its notices, its stop; then the next scope's. */
  async #act(sessionId: string, record: SessionRecord, scopes: Scope[], at: number, first: BudgetStepResult): Promise<void> {
    for (const [i, scope] of scopes.entries()) {
      const res = i === 0 ? first : this.#checkScope(record, scope, at);
      if (!res) continue;
      if (res.effects.length > 0) await this.#runner.run(scope[1], res.effects, res);
      this.#notice(sessionId, res.notices);
      if (!res.stop) continue;
      const targets = res.stop.scope === "session" ? [sessionId] : treeStopOrder(res.next, this.spend.hosted());
      // Asked again at each stop's first step: a raise applied since this check stands the budget down.
      const stands = (r: SessionRecord) => budgetStopStands(scope[0], scope[0] === "session" ? r : this.#runner.sessions.peek(scope[1]));
      for (const id of targets) await beginGovernanceStop(this.#stops, this.#ctx.clock.now(), id, res.stop, stands);
    }
  }

  #notice(sessionId: string, notices: readonly string[]): void {
    if (notices.length > 0) this.#notices.set(sessionId, [...(this.#notices.get(sessionId) ?? []), ...notices]);
  }
}
