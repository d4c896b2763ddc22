import { INSTALL_BUBBLEWRAP } from "../governance/stop/sandbox-command.ts";
import { probeSandbox, protectedSetFor } from "../governance/stop/sandbox-probe.ts";

/**
 * `doctor` and `status` on confinement (issue 41): whether agent shell commands run in the sandbox here, asked the way
 * the plugin asks (governance/stop/sandbox-probe.ts) with this user's environment. No sandbox is a warning, or a
 * failure when `confinement: required` (then the plugin refuses every agent shell command).
 */
export type ConfinementView = { ok: boolean; warn: boolean; text: string };

export async function confinementView(dir: string, env: NodeJS.ProcessEnv, required: boolean): Promise<ConfinementView> {
  const set = protectedSetFor(dir, env);
  const probe = await probeSandbox(set, env);
  if (probe.ok) {
    const readOnly = set.filter((e) => e.mode === "read-only").length;
    return {
      ok: true,
      warn: false,
      text: `agent shell commands run confined (${probe.bwrap}): governance's key hidden, ${readOnly} protected paths read-only`,
    };
  }
  const what = required ? "agent shell commands are REFUSED (confinement: required)" : "agent shell commands are NOT confined (best effort only)";
  return { ok: !required, warn: !required, text: `${what}: ${probe.why}; install it: ${INSTALL_BUBBLEWRAP}` };
}
