import { decideConcurrency, type RunningSubagent } from "../../governance/budget/concurrency.ts";
import type { EffectRunner } from "../runtime/effect-runner.ts";

/**
 * Which subagents run now in this process (foreground and background alike), for the concurrency limits. A spawn
 * allowed in `tool.execute.before` counts at once (its child session does not exist yet), so parallel `task` calls
 * of one model step cannot slip past the limit; it becomes a running child on `session.created`, and a child stops
 * running when it goes idle or is aborted. Memory is bounded by the running subagents.
 */
export class RunningSubagents {
  readonly #running = new Map<string, { parentId: string; agent: string | null }>();
  readonly #spawning = new Map<string, { parentId: string; agent: string }>();

  constructor(readonly runner: EffectRunner) {}

  started(sessionId: string, parentId: string, agent: string | null, created: boolean): void {
    this.#running.set(sessionId, { parentId, agent });
    if (!created) return;
    for (const [callId, s] of this.#spawning) {
      if (s.parentId === parentId) {
        this.#spawning.delete(callId);
        return;
      }
    }
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

  /** A refusal text for the model, or undefined (and the spawn is counted). */
  async check(sessionId: string, callId: string, targetAgent: string): Promise<string | undefined> {
    const parentRunning: RunningSubagent[] = [];
    const sample: RunningSubagent[] = [];
    for (const [id, r] of this.#running) {
      if (r.parentId === sessionId) parentRunning.push({ sessionId: id, agent: r.agent });
      if (sample.length < 10) sample.push({ sessionId: id, agent: r.agent });
    }
    for (const s of this.#spawning.values()) if (s.parentId === sessionId) parentRunning.push({ sessionId: "(starting)", agent: s.agent });
    const decision = decideConcurrency({
      parentRunning,
      projectRunning: this.#running.size + this.#spawning.size,
      projectSample: sample,
      config: this.runner.ctx.config.concurrency,
      targetAgent,
    });
    if (decision.ok) {
      this.#spawning.set(callId, { parentId: sessionId, agent: targetAgent });
      return undefined;
    }
    await this.runner.run(sessionId, decision.effects);
    return decision.message;
  }
}
