import { isSessionId } from "../session/session-record.ts";

/**
 * How the CLI knows it runs inside a governed agent's shell (issue 27): the plugin's `shell.env` hook (OpenCode 1)
 * puts these two variables into every shell a governed session starts — its `bash` tool calls — and the CLI refuses
 * to stop, inject, raise or serve the dashboard there, auditing the attempt as that session's. Unsetting them inside
 * the shell does not help on Linux: the CLI also reads them from its ancestors' start-up environment
 * (`/proc/<pid>/environ`, cli/agent-shell.ts). A process that leaves the shell's process tree first (a double fork,
 * `setsid`, a cron job) is not recognised: docs/security.md says what remains.
 */
export const AGENT_SESSION_ENV = "OPENCODE_GOVERNANCE_AGENT_SESSION";
export const AGENT_PROJECT_ENV = "OPENCODE_GOVERNANCE_AGENT_PROJECT";

export type AgentShell = { sessionId: string; project: string | null };

/** The governed session whose shell this environment belongs to, if any (a malformed marker counts, id unknown). */
export function agentShellOf(env: Readonly<Record<string, string | undefined>>): AgentShell | undefined {
  const id = env[AGENT_SESSION_ENV];
  if (id === undefined) return undefined;
  const project = env[AGENT_PROJECT_ENV];
  return { sessionId: isSessionId(id) ? id : "unknown", project: project && project.length > 0 ? project : null };
}
