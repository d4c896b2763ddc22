import type { SessionRecord } from "../../governance/session/session-record.ts";
import { confinementRequiredRefusal, INSTALL_BUBBLEWRAP } from "../../governance/stop/sandbox-command.ts";
import type { ProtectedPath } from "../../governance/stop/protected-set.ts";
import { GovernanceBlock } from "../runtime/contain.ts";
import type { SandboxState } from "../runtime/confinement.ts";
import type { PluginContext } from "../runtime/context.ts";
import { bashEntry } from "../runtime/shell-entry.ts";

/** What the confinement gate uses of the plugin instance (wiring/runtime.ts's `Runtime` has it; hooks/ cannot import wiring/). */
export type ConfineDeps = { readonly ctx: Pick<PluginContext, "confinement" | "config" | "record" | "api"> };

/**
 * Issue 41 at the tool gate, for every governed session (roots and subagents): a shell command (`bash`, OpenCode 2's
 * `shell`) runs in the sandbox (plugin/runtime/confinement.ts); an in-process file tool whose target is protected is
 * refused. Where the adapter can enter the sandbox after the host's permission check (`byEnv`: OpenCode 1's bash,
 * plugin/runtime/shell-entry.ts, decision 0071) the command text stays the agent's and the answer is the script the
 * shell's `BASH_ENV` names; otherwise the command text is rewritten to run in bwrap. No sandbox here: audited
 * `confinement_unavailable` and a toast once per instance, the command runs as before (the call guard, the CLI's
 * marker and the key redaction still apply) — unless the user's or the organisation's file says `confinement:
 * required`, then the command is refused with a text saying why.
 */
export type Confined = { command: string; entry?: undefined } | { entry: string; command?: undefined };

export function confineShell(rt: ConfineDeps, sessionId: string, command: string, byEnv = false): Confined | Promise<Confined> {
  const known = rt.ctx.confinement.known;
  if (known) return decide(rt, sessionId, command, known, byEnv);
  return rt.ctx.confinement.sandbox().then((state) => decide(rt, sessionId, command, state, byEnv));
}

function decide(rt: ConfineDeps, sessionId: string, command: string, state: SandboxState, byEnv: boolean): Confined | Promise<Confined> {
  if (state.ok) return byEnv ? entered(rt, command, state) : { command: rt.ctx.confinement.wrap(command, state) };
  const reported = reportOnce(rt, state.why);
  if (rt.ctx.config.confinement !== "required") return reported ? reported.then(() => ({ command })) : { command };
  return (async () => {
    await reported;
    await rt.ctx.record("tool_blocked", { sessionId, tool: "bash", reason: "confinement_required" });
    throw new GovernanceBlock(confinementRequiredRefusal(state.why, INSTALL_BUBBLEWRAP));
  })();
}

/** The entry script; should it not be writable, the text rewrite (confined all the same, the host's rules see bwrap). */
function entered(rt: ConfineDeps, command: string, state: Extract<SandboxState, { ok: true }>): Confined {
  try {
    return { entry: bashEntry(state) };
  } catch {
    return { command: rt.ctx.confinement.wrap(command, state) };
  }
}

/** The first time only: the audit line and the toast (`doctor` and `status` say it again on demand). */
function reportOnce(rt: ConfineDeps, why: string): Promise<void> | undefined {
  if (rt.ctx.confinement.reported) return undefined;
  rt.ctx.confinement.reported = true;
  const required = rt.ctx.config.confinement === "required";
  return (async () => {
    await rt.ctx.record("confinement_unavailable", { why, install: INSTALL_BUBBLEWRAP, required });
    const text = required
      ? `Governance refuses agent shell commands: no sandbox (${why}). Install it: ${INSTALL_BUBBLEWRAP}`
      : `Governance cannot confine agent shell commands: ${why}. Install it: ${INSTALL_BUBBLEWRAP}`;
    await rt.ctx.api.toast(text.slice(0, 300), "warning").catch(() => undefined);
  })();
}

const WHAT: Record<ProtectedPath["why"], string> = {
  key: "governance's signing key folder (it authorises stops, guidance and budget raises)",
  "project-config": "the project's .opencode/ folder (governance's records, queues and config; OpenCode's plugins and agents)",
  "opencode-config": "the project's OpenCode config (its plugin list)",
  "user-config": "the user's OpenCode config folder (the user's governance ceilings, OpenCode config and plugins)",
  "org-policy": "the organisation's governance policy",
  "plugin-code": "the governance plugin's own code",
  "session-server": "the user's tmux sockets (a server outside the sandbox)",
};

/** A file tool on a protected path: audited `control_refused` (surface `protected`), refused with what it named. */
export async function refuseFileTool(
  rt: ConfineDeps,
  record: Pick<SessionRecord, "agent" | "parentId"> | undefined,
  sessionId: string,
  tool: string,
  hit: ProtectedPath,
): Promise<never> {
  await rt.ctx.record("control_refused", { sessionId, via: "tool", tool, surface: "protected", why: hit.why, path: hit.path, agent: record?.agent ?? null });
  const verb = hit.mode === "hidden" ? "read or change" : "change";
  throw new GovernanceBlock(
    `Refused by governance: ${tool} would ${verb} ${WHAT[hit.why]} (${hit.path}). Agents may not ${verb} it — only the user can, ` +
      "from their own terminal. Work on the project's files instead. (audited)",
  );
}
