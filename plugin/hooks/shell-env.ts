import { AGENT_PROJECT_ENV, AGENT_SESSION_ENV } from "../../governance/stop/agent-shell.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * `shell.env` (OpenCode 1): every shell a governed session starts (its `bash` calls) carries the session's id and the
 * project, so the governance CLI run there refuses to act and audits the attempt as this session's
 * (governance/stop/agent-shell.ts). Root sessions are marked only when the user's own config asks for it
 * (`guard.rootSessions`); a shell OpenCode starts for no session (none given) is the user's.
 */
export async function shellEnv(rt: Runtime, input: { cwd: string; sessionID?: string }, output: { env: Record<string, string> }): Promise<void> {
  const id = input.sessionID;
  if (!id) return;
  const record = rt.runner.sessions.peek(id) ?? (await rt.ctx.store.read(id).catch(() => undefined));
  if (record && !rt.ctx.guarded(record)) return;
  output.env[AGENT_SESSION_ENV] = id;
  output.env[AGENT_PROJECT_ENV] = rt.ctx.directory;
}
