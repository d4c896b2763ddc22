import * as Caps from "../../governance/budget/spend-caps.ts";
import { capStandDownStep } from "../../governance/budget/spend-caps.ts";
import type { UseDelta } from "../../governance/budget/budget-usage.ts";
import { loadKey } from "../../governance/storage/directive-signing.ts";
import { projectLedgerDir, SpendLedger, userLedgerDir } from "../../governance/storage/spend-ledger.ts";
import { localTimeZone, type SpendWindow, spendWindow } from "../../governance/time/spend-window.ts";
import { buildCapWarning } from "../../governance/budget/spend-notices.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import { beginGovernanceStop } from "./governance-stop.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";
import type { SessionTracker } from "../sessions/session-tracker.ts";
import type { StopController } from "../stop/stop-controller.ts";

type Scope = "project" | "user";

/** Today's and this week's use of each scope, with the caps that apply (raises included): the `governance.spend` gauge. */
export type SpendView = {
  window: SpendWindow;
  timeZone: string;
  caps: Caps.CapInput[];
};

/**
 * Budgets over time for this process (issue 44, docs/budgets.md "Caps over days and weeks"): appends every use this
 * process hosts to the project's and the user's spend ledgers (governance/storage/spend-ledger.ts), and after each use
 * (and before a root's step) sums the ledgers of every process, asks governance/budget/spend-caps.ts what the caps say, and runs it: a
 * notice for the acting session, the audit lines and toasts, and the stop of every subagent it hosts while a cap is
 * spent. Memory: the marks of four caps and the ledgers' per-file offsets (at most 15 days of files).
 */
export class SpendGuard {
  readonly #ledgers = new Map<Scope, SpendLedger>();
  #marks: Caps.CapMarks = {};
  #spent: Caps.CapLine[] = [];
  #pruned = "";
  /** Warnings for a session's next tool result (taken by the budget guard's delivery). At most one per cap and key a window. */
  readonly #notices = new Map<string, string[]>();

  constructor(
    readonly runner: EffectRunner,
    readonly tracker: SessionTracker,
    readonly stops: StopController,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The spend notices queued for `sessionId`'s next tool result, taken. */
  take(sessionId: string): string[] {
    const notices = this.#notices.get(sessionId) ?? [];
    this.#notices.delete(sessionId);
    return notices;
  }

  #ledger(scope: Scope): SpendLedger {
    let l = this.#ledgers.get(scope);
    if (!l) {
      const key = loadKey(this.env);
      const dir = scope === "project" ? projectLedgerDir(this.runner.ctx.directory) : userLedgerDir(this.env);
      l = new SpendLedger(dir, key.ok ? key.key : null);
      this.#ledgers.set(scope, l);
    }
    return l;
  }

  #window(at: number): SpendWindow {
    return spendWindow(at, localTimeZone());
  }

  /**
   * A session's use moved: its spend goes to both ledgers at once (one appended line each), then the caps are looked
   * at (what a spent cap starts runs on, contained: a model step or a usage event does not wait for a stop to begin).
   */
  record(sessionId: string, delta: UseDelta): void {
    if (!this.#append(sessionId, delta)) return;
    void this.check(sessionId)?.catch((error: unknown) => this.runner.ctx.reportHookError("spend caps", error));
  }

  #append(sessionId: string, delta: UseDelta): boolean {
    const use = Caps.spendOf(delta);
    if (Object.keys(use).length === 0) return false;
    const at = this.runner.ctx.clock.now();
    const { day } = this.#window(at);
    for (const scope of ["project", "user"] as const) {
      try {
        const ledger = this.#ledger(scope);
        if (this.#pruned !== day) ledger.prune(day);
        ledger.add(day, at, use, sessionId);
      } catch (error) {
        this.runner.ctx.reportHookError(`spend ledger (${scope})`, error);
      }
    }
    this.#pruned = day;
    return true;
  }

  /** True when any cap is set (else nothing is read on a check). */
  #anyCap(): boolean {
    const b = this.runner.ctx.config.budgets;
    return Caps.CAP_NAMES.some((cap) => {
      const [scope, period] = cap.split(".") as [Scope, "daily" | "weekly"];
      return Object.keys(b[scope][period]).length > 0;
    });
  }

  /** Today's and this week's use of both scopes against their caps (raises included): the `governance.spend` gauge. */
  view(at = this.runner.ctx.clock.now()): SpendView {
    const window = this.#window(at);
    return { window, timeZone: localTimeZone(), caps: this.#inputs(window) };
  }

  /** The gauge's rows; a ledger that cannot be read leaves that export's gauge empty rather than failing it. */
  gaugeRows(): Caps.CapInput[] {
    try {
      return this.view().caps;
    } catch {
      return [];
    }
  }

  #inputs(window: SpendWindow): Caps.CapInput[] {
    const days = Caps.windowDays(window);
    const sums = (scope: Scope): Caps.ScopeSums => {
      const ledger = this.#ledger(scope);
      const week = ledger.sum(days);
      return { today: ledger.sum([window.day]).use, week: week.use, raises: week.raises };
    };
    return Caps.capInputs(this.runner.ctx.config, window, { project: sums("project"), user: sums("user") });
  }

  /** The caps spent at the last check (a root's status note says so). */
  get spent(): readonly Caps.CapLine[] {
    return this.#spent;
  }

  /**
   * One look at the caps for `sessionId`'s step. Nothing to do (no cap, nothing new): undefined at once. Otherwise
   * the effects run, a warning becomes the session's notice, and while a cap is spent every subagent this process
   * hosts that is still at work is asked to stop (once per cap and window: the stop's id names them).
   */
  check(sessionId: string): Promise<void> | undefined {
    if (!this.#anyCap()) {
      this.#spent = [];
      return;
    }
    const at = this.runner.ctx.clock.now();
    const window = this.#window(at);
    let res: Caps.CapCheck;
    try {
      res = Caps.checkCaps(this.#marks, this.#inputs(window), this.runner.ctx.config.budgets.warnAt);
    } catch (error) {
      this.runner.ctx.reportHookError("spend caps", error);
      return;
    }
    this.#marks = res.marks;
    this.#spent = res.spent;
    // A session that ends before its next tool result leaves its notice here: bounded, never growing with sessions.
    if (this.#notices.size > 64) this.#notices.clear();
    if (res.warnings.length > 0) this.#notices.set(sessionId, [...(this.#notices.get(sessionId) ?? []), buildCapWarning(res.warnings)]);
    const targets = res.spent.length > 0 ? Caps.capStopTargets(this.hosted()) : [];
    const standDowns = Caps.capStandDowns(res, this.hosted());
    if (res.effects.length === 0 && targets.length === 0 && standDowns.length === 0) return;
    return this.#act(sessionId, res, targets, window, standDowns);
  }

  /**
   * The spawn gate's question: a refusal text while a cap is spent (`decideCapSpawn`), after a fresh look at the caps
   * (a raise since the last step counts), or undefined. A ledger that cannot be read lets the spawn through: its
   * first step looks again.
   */
  async refuseSpawn(sessionId: string, targetAgent: string): Promise<string | undefined> {
    await this.check(sessionId);
    if (this.#spent.length === 0) return undefined;
    const window = this.#window(this.runner.ctx.clock.now());
    const decision = Caps.decideCapSpawn({ spent: this.#spent, window, timeZone: localTimeZone(), targetAgent });
    if (decision.ok) return undefined;
    await this.runner.run(sessionId, decision.effects);
    return decision.message;
  }

  async #act(sessionId: string, res: Caps.CapCheck, targets: string[], window: SpendWindow, standDowns: string[]): Promise<void> {
    if (res.effects.length > 0) await this.runner.run(sessionId, res.effects);
    // Every cap back under (a raise): the stops the caps started are withdrawn, as a tree raise's are (capStandDowns).
    for (const id of standDowns) await this.runner.step(id, capStandDownStep);
    const line = res.spent[0];
    if (!line) return;
    const stop = Caps.capStop(line, line.cap.endsWith("daily") ? window.day : window.week);
    for (const id of targets) await beginGovernanceStop(this.stops, this.runner.ctx.clock.now(), id, stop);
  }

  /** The records of the sessions this process hosts (whom a spent cap or a tree budget may stop). */
  hosted(): SessionRecord[] {
    return [...this.tracker.hosted()].flatMap((id) => this.runner.sessions.peek(id) ?? []);
  }
}
