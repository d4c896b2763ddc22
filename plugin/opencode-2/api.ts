import { hostToolName } from "../../governance/host/host-lines.ts";
import type { HostApi } from "../runtime/host-api.ts";
import type { V2Context } from "./types.ts";
import { settle } from "../runtime/settle.ts";

/**
 * Which sessions are running a turn, as OpenCode 2 tells it on the event stream (`session.execution.started` until
 * `succeeded | failed | interrupted`). OpenCode 2 has no status route and never emits `session.status`/`session.idle`,
 * so this map is what "checked idle" reads after `session.interrupt`.
 */
export class ExecutionStates {
  readonly #busy = new Map<string, string>();

  started(sessionId: string): void {
    this.#busy.set(sessionId, "busy");
  }

  ended(sessionId: string): void {
    this.#busy.delete(sessionId);
  }

  snapshot(): Record<string, string> {
    return Object.fromEntries(this.#busy);
  }
}

/**
 * The HostApi on OpenCode 2's plugin context: abort = `session.interrupt`, status = the execution states seen on
 * the event stream, parent = `session.get` (cached by the location filter), toast = an audit line. OpenCode 2 gives a
 * server plugin no toast (only its TUI plugins have one); `session.synthetic` would put the text into the session's
 * conversation (the model reads it, the prompt cache breaks), so a V2 "toast" is a `host_notice` line naming its
 * session, which the TUI entry (plugin/tui/, docs/decisions/0059) shows as a toast with an "Open" action, and `doctor`
 * and the dashboard show too. Every call bounded, none throws.
 */
export function createHostApi(ctx: V2Context, states: ExecutionStates, notice: (message: string, variant: string, sessionId?: string) => void): HostApi {
  /** Which `interrupt` input this host takes: unknown until a call succeeds (true: `{ sessionID }` only). */
  let plain: boolean | undefined;
  return {
    async abort(sessionId) {
      // A governance stop must not set the session's queued prompts running: `continue: false` says so on the hosts
      // whose input has it (about 2.0.18–2.0.21); a host whose input refuses the key gets `{ sessionID }` (then what
      // it does with queued prompts is its own: unverified, docs/opencode-2.md). The shape that worked is remembered.
      if (plain !== true) {
        const res = await settle(
          ctx.session.interrupt({ sessionID: sessionId, continue: false }).then(
            () => true,
            () => false,
          ),
        );
        if (res === true) {
          plain = false;
          return true;
        }
        if (res === undefined || plain === false) return false;
      }
      const res = await settle(ctx.session.interrupt({ sessionID: sessionId }).then(() => true));
      if (res === true) plain = true;
      return res === true;
    },
    async status() {
      return states.snapshot();
    },
    async parentOf(sessionId) {
      const info = await settle(ctx.session.get({ sessionID: sessionId }));
      if (!info) return undefined;
      return { parentId: info.parentID ?? null, agent: info.agent ?? null };
    },
    async toast(message, variant, sessionId) {
      notice(message, variant, sessionId);
    },
    // Records keep the core's names; the model on OpenCode 2 can only call `shell` and `subagent` (2.0.15 answers
    // "No tool named \"bash\"").
    toolName: (coreTool) => hostToolName(2, coreTool),
  };
}
