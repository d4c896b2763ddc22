import { AGENT_PROJECT_ENV, AGENT_SESSION_ENV } from "../../governance/stop/agent-shell.ts";
import type { PluginContext } from "../runtime/context.ts";
import type { SessionRuntime } from "../sessions/session-runtime.ts";

/** What a shell's marks uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type ShellEnvDeps = { readonly ctx: Pick<PluginContext, "directory" | "guarded" | "store">; readonly sessions: Pick<SessionRuntime, "peek"> };

/**
 * The variables of a shell a session starts (OpenCode 1 `shell.env`; OpenCode 2's released plugin API has no such
 * hook): every shell a governed session starts (its `bash` calls) carries the session's id and the
 * project, so the governance CLI run there refuses to act and audits the attempt as this session's
 * (governance/stop/agent-shell.ts). Root sessions are marked only when the user's own config asks for it
 * (`guard.rootSessions`); a shell OpenCode starts for no session (none given) is the user's.
 */
export async function shellEnv(rt: ShellEnvDeps, sessionId: string | undefined): Promise<Record<string, string>> {
  const id = sessionId;
  if (!id) return {};
  const record = rt.sessions.peek(id) ?? (await rt.ctx.store.read(id).catch(() => undefined));
  if (record && !rt.ctx.guarded(record)) return {};
  return { [AGENT_SESSION_ENV]: id, [AGENT_PROJECT_ENV]: rt.ctx.directory };
}
