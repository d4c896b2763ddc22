import { spawn } from "node:child_process";
import type { HooksConfig } from "../../governance/config/hooks-config.ts";
import type { AuditEventType } from "../../governance/storage/audit-log.ts";
import {
  enqueueRun,
  type HookLane,
  type HookOutcome,
  type HookRun,
  hookFailure,
  hookRuns,
  IDLE_LANE,
  runEnded,
  type SessionFacts,
} from "../../governance/user-hooks/hook-plan.ts";
import type { PluginContext } from "./context.ts";
import type { Timers } from "./timers.ts";

export type UserHooksDeps = {
  /** The user's hooks as the config now says (reloads apply to the next event). */
  hooks: () => HooksConfig;
  directory: string;
  now: () => number;
  timers: Timers;
  record: (type: AuditEventType, data: Record<string, unknown>) => void;
  /** Governance's record of a session, if this process holds it (a hook's payload names the agent and its parent). */
  session?: (sessionId: string) => SessionFacts | undefined;
  reportError: (where: string, error: unknown) => void;
  env?: NodeJS.ProcessEnv;
};

/**
 * Runs the user's hooks (docs/hooks.md): the rules are governance/user-hooks/hook-plan.ts; this only spawns and sends.
 * Nothing here is awaited by a hook of OpenCode's: {@link fire} takes the event off the audit path and returns, the
 * work starts on a later tick. A command runs as the user with `/bin/sh -c`, outside the agents' sandbox, in its own
 * process group, killed with it at its timeout; a webhook is abandoned at its timeout. A failure is `hook_failed`.
 */
export class UserHooks {
  readonly #deps: UserHooksDeps;
  readonly #lanes = new Map<string, HookLane>();
  readonly #running = new Set<Promise<void>>();

  constructor(deps: UserHooksDeps) {
    this.#deps = deps;
  }

  /** An audit event was recorded. Never throws, never blocks. */
  fire(type: string, data: Record<string, unknown>): void {
    try {
      const hooks = this.#deps.hooks();
      if (Object.keys(hooks).length === 0) return;
      const sessionId = typeof data.sessionId === "string" ? data.sessionId : undefined;
      const session = sessionId ? this.#deps.session?.(sessionId) : undefined;
      for (const run of hookRuns(hooks, type, data, this.#deps.now(), this.#deps.directory, session)) {
        const { lane, start, dropped } = enqueueRun(this.#lanes.get(run.key) ?? IDLE_LANE, run);
        this.#lanes.set(run.key, lane);
        if (dropped) this.#failed(dropped, { ok: false, why: "dropped" }, 0);
        if (start) this.#start(start);
      }
    } catch (error) {
      this.#deps.reportError("user-hooks", error);
    }
  }

  /** Runs started and not yet ended (tests wait for them; an exit does not). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Actions with a run going or waiting (the soak's "nothing grows" check). */
  size(): number {
    return this.#lanes.size;
  }

  #start(run: HookRun): void {
    const began = this.#deps.now();
    const p = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => ("url" in run.action ? this.#post(run, run.action.url) : this.#command(run, run.action.command)))
      .catch((): HookOutcome => ({ ok: false, why: "spawn" }))
      .then((outcome) => {
        if (!outcome.ok) this.#failed(run, outcome, this.#deps.now() - began);
        const { lane, start } = runEnded(this.#lanes.get(run.key) ?? IDLE_LANE);
        if (lane.running) this.#lanes.set(run.key, lane);
        else this.#lanes.delete(run.key);
        if (start) this.#start(start);
      })
      .catch((error: unknown) => this.#deps.reportError("user-hooks", error))
      .finally(() => this.#running.delete(p));
    this.#running.add(p);
  }

  #failed(run: HookRun, outcome: HookOutcome, ms: number): void {
    const data = hookFailure(run, outcome, ms);
    if (data) this.#deps.record("hook_failed", data);
  }

  #command(run: HookRun, command: string): Promise<HookOutcome> {
    return new Promise((resolve) => {
      const env = { ...(this.#deps.env ?? process.env), OPENCODE_GOVERNANCE_EVENT: run.event };
      const child = spawn("/bin/sh", ["-c", command], { cwd: this.#deps.directory, env, detached: true, stdio: ["pipe", "ignore", "ignore"] });
      let timedOut = false;
      const timer = this.#deps.timers.setTimeout(() => {
        timedOut = true;
        kill(child.pid);
        return undefined;
      }, run.timeoutMs);
      child.once("error", () => {
        this.#deps.timers.clear(timer);
        resolve({ ok: false, why: "spawn" });
      });
      child.once("exit", (code, signal) => {
        this.#deps.timers.clear(timer);
        if (timedOut) resolve({ ok: false, why: "timeout" });
        else if (code === 0) resolve({ ok: true });
        else if (code === null && signal) resolve({ ok: false, why: "signal" });
        else resolve({ ok: false, why: "exit", exitCode: code ?? -1 });
      });
      // A command that does not read its stdin closes the pipe: that is its choice, not a failure.
      child.stdin?.once("error", () => undefined);
      child.stdin?.end(run.body);
      child.unref();
    });
  }

  async #post(run: HookRun, url: string): Promise<HookOutcome> {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "opencode-governance-hooks/1" },
        body: run.body,
        // A redirect would take the event where the user did not send it.
        redirect: "error",
        signal: AbortSignal.timeout(run.timeoutMs),
      });
      await res.body?.cancel().catch(() => undefined);
      return res.ok ? { ok: true } : { ok: false, why: "http", status: res.status };
    } catch (error) {
      const name = (error as Error).name;
      return { ok: false, why: name === "TimeoutError" || name === "AbortError" ? "timeout" : "network" };
    }
  }
}

/** The runtime's hooks: fed every audit event this process records (after telemetry), configured by the user's file. */
export function tapUserHooks(ctx: PluginContext): UserHooks {
  const hooks = new UserHooks({
    hooks: () => ctx.configWatcher.loaded?.hooks ?? {},
    directory: ctx.directory,
    now: () => ctx.clock.now(),
    timers: ctx.timers,
    record: (type, data) => void ctx.record(type, data),
    session: (id) => ctx.store.peek(id),
    reportError: (where, error) => ctx.reportHookError(where, error),
  });
  ctx.sink.tap((type, data) => hooks.fire(type, data));
  return hooks;
}

/** The command and everything it started (its process group). */
function kill(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
