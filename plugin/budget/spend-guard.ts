import * as Caps from "../../governance/budget/spend-caps.ts";
import type { UseDelta } from "../../governance/budget/budget-usage.ts";
import type { GovernanceStop } from "../../governance/budget/budget-step.ts";
import { loadKey } from "../../governance/storage/directive-signing.ts";
import { projectLedgerDir, SpendLedger, userLedgerDir } from "../../governance/storage/spend-ledger.ts";
import { localTimeZone, type SpendWindow, spendWindow } from "../../governance/time/spend-window.ts";
import { buildCapWarning } from "../../governance/texts/spend-notices.ts";
import type { SessionRecord } from "../../governance/session/session-record.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";

type Scope = "project" | "user";

/** What the spend guard needs of its host: the sessions this process hosts, a notice queue, a stop to begin. */
export type SpendHost = {
  hosted(): SessionRecord[];
  notice(sessionId: string, notices: readonly string[]): void;
  stop(sessionId: string, stop: GovernanceStop): Promise<void>;
};

/** Today's and this week's use of each scope, with the caps that apply (raises included): `status` and the dashboard. */
export type SpendView = {
  window: SpendWindow;
  timeZone: string;
  caps: Caps.CapInput[];
};

/**
 * Budgets over time for this process (issue 44, docs/budgets.md "Caps over days and weeks"): appends every use this
 * process hosts to the project's and the user's spend ledgers (governance/storage/spend-ledger.ts), and on each budget
 * check sums the ledgers of every process, asks governance/budget/spend-caps.ts what the caps say, and runs it: a
 * notice for the acting session, the audit lines and toasts, and the stop of every subagent it hosts while a cap is
 * spent. Memory: the marks of four caps and the ledgers' per-file offsets (at most 15 days of files).
 */
export class SpendGuard {
  readonly #runner: EffectRunner;
  readonly #host: SpendHost;
  readonly #env: NodeJS.ProcessEnv;
  readonly #ledgers = new Map<Scope, SpendLedger>();
  #marks: Caps.CapMarks = {};
  #spent: Caps.CapLine[] = [];
  #pruned = "";

  constructor(runner: EffectRunner, host: SpendHost, env: NodeJS.ProcessEnv = process.env) {
    this.#runner = runner;
    this.#host = host;
    this.#env = env;
  }

  #ledger(scope: Scope): SpendLedger {
    let l = this.#ledgers.get(scope);
    if (!l) {
      const key = loadKey(this.#env);
      const dir = scope === "project" ? projectLedgerDir(this.#runner.ctx.directory) : userLedgerDir(this.#env);
      l = new SpendLedger(dir, key.ok ? key.key : null);
      this.#ledgers.set(scope, l);
    }
    return l;
  }

  #window(at: number): SpendWindow {
    return spendWindow(at, localTimeZone());
  }

  /** A session's use moved: its spend goes to both ledgers at once (one appended line each). Contained. */
  record(sessionId: string, delta: UseDelta): void {
    const use = Caps.spendOf(delta);
    if (Object.keys(use).length === 0) return;
    const at = this.#runner.ctx.clock.now();
    const { day } = this.#window(at);
    for (const scope of ["project", "user"] as const) {
      try {
        const ledger = this.#ledger(scope);
        if (this.#pruned !== day) ledger.prune(day);
        ledger.add(day, at, use, sessionId);
      } catch (error) {
        this.#runner.ctx.reportHookError(`spend ledger (${scope})`, error);
      }
    }
    this.#pruned = day;
  }

  /** True when any cap is set (else nothing is read on a check). */
  #anyCap(): boolean {
    const b = this.#runner.ctx.config.budgets;
    return Caps.CAP_NAMES.some((cap) => {
      const [scope, period] = cap.split(".") as [Scope, "daily" | "weekly"];
      return Object.keys(b[scope][period]).length > 0;
    });
  }

  /** Today's and this week's use of both scopes against their caps (raises included): the `governance.spend` gauge. */
  view(at = this.#runner.ctx.clock.now()): SpendView {
    const window = this.#window(at);
    return { window, timeZone: localTimeZone(), caps: this.#inputs(window) };
  }

  #inputs(window: SpendWindow): Caps.CapInput[] {
    const days = Caps.windowDays(window);
    const sums = (scope: Scope): Caps.ScopeSums => {
      const ledger = this.#ledger(scope);
      const week = ledger.sum(days);
      return { today: ledger.sum([window.day]).use, week: week.use, raises: week.raises };
    };
    return Caps.capInputs(this.#runner.ctx.config, window, { project: sums("project"), user: sums("user") });
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
    const at = this.#runner.ctx.clock.now();
    const window = this.#window(at);
    let res: Caps.CapCheck;
    try {
      res = Caps.checkCaps(this.#marks, this.#inputs(window), this.#runner.ctx.config.budgets.warnAt);
    } catch (error) {
      this.#runner.ctx.reportHookError("spend caps", error);
      return;
    }
    this.#marks = res.marks;
    this.#spent = res.spent;
    if (res.warnings.length > 0) this.#host.notice(sessionId, [buildCapWarning(res.warnings)]);
    const targets = res.spent.length > 0 ? Caps.capStopTargets(this.#host.hosted()) : [];
    if (res.effects.length === 0 && targets.length === 0) return;
    return this.#act(sessionId, res, targets, window);
  }

  async #act(sessionId: string, res: Caps.CapCheck, targets: string[], window: SpendWindow): Promise<void> {
    if (res.effects.length > 0) await this.#runner.run(sessionId, res.effects);
    const line = res.spent[0];
    if (!line) return;
    const stop = Caps.capStop(line, line.cap.endsWith("daily") ? window.day : window.week);
    for (const id of targets) await this.#host.stop(id, stop);
  }
}
