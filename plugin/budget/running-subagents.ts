import { decideConcurrentSpawn, type Reservation, reservationTaken } from "../../governance/budget/concurrency.ts";
import type { EffectRunner } from "../sessions/effect-runner.ts";

/**
 * Which subagents run now in this process (foreground and background alike), for the concurrency limits. A spawn
 * allowed in `tool.execute.before` counts at once (its child session does not exist yet), so parallel `task` calls
 * of one model step cannot slip past the limit; it becomes a running child on `session.created` (a `task_id`
 * continuation: when the session it continues is busy — counted once, `reservationTaken`), and a child stops
 * running when it goes idle, is aborted, fails or is deleted. A reservation whose child never appeared is released on
 * every end of its `task` call (issue 26 item 2): `tool.execute.after`, the tool part's end (`completed`/`error`,
 * which OpenCode reports also for a call refused by a hook, an unknown agent, a permission denial, a thrown error or
 * an abort), and at the latest the end of the parent's turn. So the count is the children actually running.
 * Memory is bounded by the running subagents.
 */
export class RunningSubagents {
  readonly #running = new Map<string, { parentId: string; agent: string | null }>();
  readonly #spawning = new Map<string, Reservation>();

  constructor(readonly runner: EffectRunner) {}

  /** A subagent runs (created, or busy again): it takes its spawn's reservation, if one is waiting for it. */
  started(sessionId: string, parentId: string, agent: string | null, created: boolean): void {
    this.#running.set(sessionId, { parentId, agent });
    if (this.#spawning.size === 0) return;
    const callId = reservationTaken(this.#spawning, { sessionId, parentId, created });
    if (callId !== undefined) this.#spawning.delete(callId);
  }

  sizes(): Record<string, number> {
    return { runningSubagents: this.#running.size, spawning: this.#spawning.size };
  }

  ended(sessionId: string): void {
    this.#running.delete(sessionId);
  }

  /** The spawning `task` call returned: its reservation, if its child never appeared, is released. */
  callEnded(callId: string): void {
    this.#spawning.delete(callId);
  }

  /** The parent's turn ended (idle, aborted): none of its `task` calls is still creating a child. */
  turnEnded(parentId: string): void {
    for (const [callId, s] of this.#spawning) if (s.parentId === parentId) this.#spawning.delete(callId);
  }

  /** How many subagents of this parent count against its limit now (running children and reservations). */
  countFor(parentId: string): number {
    let n = 0;
    for (const r of this.#running.values()) if (r.parentId === parentId) n++;
    for (const s of this.#spawning.values()) if (s.parentId === parentId) n++;
    return n;
  }

  /** A refusal text for the model, or undefined (and the spawn is counted); the decision is `decideConcurrentSpawn`. */
  async check(sessionId: string, callId: string, targetAgent: string, continues?: string): Promise<string | undefined> {
    const config = this.runner.ctx.config.concurrency;
    const decision = decideConcurrentSpawn({ parentId: sessionId, running: this.#running, spawning: this.#spawning.values(), config, targetAgent });
    if (decision.ok) {
      this.#spawning.set(callId, { parentId: sessionId, agent: targetAgent, ...(continues !== undefined ? { continues } : {}) });
      return undefined;
    }
    await this.runner.run(sessionId, decision.effects);
    return decision.message;
  }
}
