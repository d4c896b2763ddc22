import { BUDGET_STOP_PREFIX, type BudgetCheck, checkBudget } from "../../governance/budget/budget-check.ts";
import { verifiedRaises } from "../../governance/budget/budget-raise.ts";
import type { MessageUse } from "../../governance/session/budget-state.ts";
import * as U from "../../governance/budget/budget-usage.ts";
import { LOOP_STOP_PREFIX, type LoopCallKey, type LoopState, loopCallKey } from "../../governance/budget/loop-guard.ts";
import { watchLoop } from "./loop-watch.ts";
import { GOVERNANCE_REQUESTER } from "../../governance/session/stop-origin.ts";
import { RunningSubagents } from "./running-subagents.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { budgetStopReason, buildBudgetWarning, buildLoopNotice, loopStopReason } from "../../governance/texts/budget-notices.ts";
import { standDownNotice } from "./stand-down-notice.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { StopController } from "../stop/stop-controller.ts";

const hasLimits = (l: object) => Object.keys(l).length > 0;

/**
 * Budgets, concurrency limits and loop guards for the sessions this process hosts (docs/budgets.md). The rules are
 * pure steps of governance/budget/; this adapter keeps the little per-session memory they need (loop state, pending
 * notices, running subagents), feeds them OpenCode's signals and runs their effects. Hot-path work (every tool call,
 * model step and usage event) is O(1) and writes nothing at once: records change through `softStep` (written behind).
 */
export class BudgetGuard {
  readonly #runner: EffectRunner;
  readonly #stops: StopController;
  readonly #tracker: SessionTracker;
  /** Notices for a session's next tool result. */
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

  constructor(runner: EffectRunner, stops: StopController, tracker: SessionTracker) {
    this.#runner = runner;
    this.#stops = stops;
    this.#tracker = tracker;
    this.running = new RunningSubagents(runner);
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
  async onToolCall(sessionId: string, record: SessionRecord, tool: string, callId: string, args: unknown): Promise<void> {
    if (this.#ctx.config.loops.enabled) this.#callArgs.set(callId, loopCallKey(tool, args, this.#ctx.clock.now(), this.#ctx.directory));
    this.#count(record, { toolCalls: 1 });
    await this.#check(sessionId);
  }

  /** One model request of the session (the machine's soft `model_step`). */
  async onModelStep(sessionId: string, record: SessionRecord): Promise<void> {
    this.#count(record, { modelRequests: 1 });
    await this.#check(sessionId);
  }

  /** OpenCode's running token and cost totals for a session (`session.updated`). */
  onReportedUse(sessionId: string, reported: U.ReportedUse): Promise<void> {
    return this.#takeUse(sessionId, (r) => U.takeReportedUse(r, reported));
  }

  /** One assistant message's own tokens and cost (`message.updated`). */
  onMessageUse(sessionId: string, message: MessageUse): Promise<void> {
    return this.#takeUse(sessionId, (r) => U.takeMessageUse(r, message));
  }

  async #takeUse(sessionId: string, take: (r: SessionRecord) => { next: SessionRecord; delta: U.UseDelta }): Promise<void> {
    let delta: U.UseDelta = {};
    const applied = this.#runner.sessions.softStep(sessionId, (r) => {
      const taken = take(r);
      delta = taken.delta;
      return { next: taken.next, effects: [] };
    });
    if (!applied || applied.next === applied.previous) return;
    this.#count(applied.next as SessionRecord, delta);
    await this.#check(sessionId);
  }

  /** `session.status`: active time, and which subagents are running. */
  async onStatus(sessionId: string, status: string): Promise<void> {
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
    } else if (record) await this.#check(sessionId);
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
   * stop starts here, so its L1 rides on this very result). Returns the notices to put in front of the output.
   */
  async onToolResult(sessionId: string, tool: string, callId: string, output: string): Promise<string[]> {
    this.running.callEnded(callId);
    const call = this.#callArgs.get(callId);
    this.#callArgs.delete(callId);
    const notes: string[] = [];
    // A session being stopped is told by the ladder; the loop guard only watches sessions at work.
    const verdict =
      call && this.#runner.sessions.peek(sessionId)?.control === "active" ? await watchLoop(this.#ctx, this.#loops, sessionId, tool, call, output) : null;
    if (verdict?.kind === "notice") notes.push(buildLoopNotice(verdict.shape, verdict.count, tool, verdict.period));
    if (verdict?.kind === "stop")
      await this.#beginStop(sessionId, `${LOOP_STOP_PREFIX}${verdict.shape}`, loopStopReason(verdict.shape, verdict.count, verdict.period));
    notes.unshift(...(this.#notices.get(sessionId) ?? []));
    this.#notices.delete(sessionId);
    const resumed = await standDownNotice(this.#runner, sessionId);
    if (resumed) notes.unshift(resumed);
    return notes;
  }

  /** Adds a session's use to its tree's totals, on the root's record (in memory, written behind). */
  #count(record: SessionRecord, delta: U.UseDelta): void {
    this.#runner.sessions.softStep(record.rootId, (root) => ({ next: U.addTreeUse(root, delta), effects: [] }));
  }

  /** The session's own budgets, then its tree's. */
  async #check(sessionId: string): Promise<void> {
    const { config, clock } = this.#ctx;
    const record = this.#runner.sessions.peek(sessionId);
    if (!record || record.control === "stopped") return;
    const at = clock.now();
    const warnAt = config.budgets.warnAt;
    const own = U.raisedLimits(U.configuredLimits(config, record), verifiedRaises(sessionId, record.budget.raises), "session");
    if (hasLimits(own)) {
      const res = this.#runner.sessions.softStep(sessionId, (r) => checkBudget(r, "session", U.sessionUsage(r, at), own, warnAt, at));
      if (res) await this.#handle(sessionId, sessionId, "session", res);
    }
    const root = this.#runner.sessions.peek(record.rootId);
    if (!root) return;
    const tree = U.raisedLimits(config.budgets.tree, verifiedRaises(root.sessionId, root.budget.raises), "tree");
    if (!hasLimits(tree)) return;
    const res = this.#runner.sessions.softStep(root.sessionId, (r) => checkBudget(r, "tree", U.treeUsage(r, at), tree, warnAt, at));
    if (res) await this.#handle(sessionId, root.sessionId, "tree", res);
  }

  async #handle(sessionId: string, recordId: string, scope: U.BudgetScope, res: BudgetCheck & { previous: SessionRecord }): Promise<void> {
    if (res.effects.length > 0) await this.#runner.run(recordId, res.effects, res);
    if (res.warnings.length > 0) {
      const list = this.#notices.get(sessionId) ?? [];
      list.push(buildBudgetWarning(res.warnings));
      this.#notices.set(sessionId, list);
    }
    if (!res.exceeded) return;
    const line = res.exceeded;
    if (scope === "session") {
      await this.#beginStop(sessionId, `${BUDGET_STOP_PREFIX}session-${line.key}`, budgetStopReason(line, res.next.agent));
      return;
    }
    // The tree's budget ran out: every running session of the tree is stopped, the root last.
    const reason = budgetStopReason(line, null);
    const ids = [...this.#tracker.hosted()].filter((id) => id !== recordId && this.#runner.sessions.peek(id)?.rootId === recordId);
    for (const id of [...ids, recordId]) {
      const r = this.#runner.sessions.peek(id);
      if (r && r.control === "active") await this.#beginStop(id, `${BUDGET_STOP_PREFIX}tree-${line.key}`, reason);
    }
  }

  async #beginStop(sessionId: string, kind: string, reason: string): Promise<void> {
    const at = this.#ctx.clock.now();
    await this.#stops.begin(sessionId, [{ kind: "stop", id: `${kind}-${at}`, at, level: 1, reason, by: GOVERNANCE_REQUESTER }]);
  }
}
