import os from "node:os";
import path from "node:path";
import type { ProtectedPath } from "../governance/stop/protected-set.ts";
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
    return {
      ok: true,
      warn: false,
      text: `agent shell commands run confined (${probe.bwrap}): ${protectedSummary(set, dir, env.HOME || os.homedir())}`,
    };
  }
  const what = required ? "agent shell commands are REFUSED (confinement: required)" : "agent shell commands are NOT confined (best effort only)";
  return { ok: !required, warn: !required, text: `${what}: ${probe.why}; install it: ${INSTALL_BUBBLEWRAP}` };
}

/**
 * The protected set in words, each path as the user knows it (relative to the project, `~` for the home folder) —
 * a count alone left a newcomer guessing why `.opencode/agent/x.md` was read-only in the agent's shell (issue 39 walk).
 */
export function protectedSummary(set: readonly ProtectedPath[], dir: string, home: string): string {
  const shown = (p: string) => {
    const rel = path.relative(dir, p);
    if (rel === "") return ".";
    if (!rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
    return home && (p === home || p.startsWith(`${home}${path.sep}`)) ? `~${p.slice(home.length)}` : p;
  };
  const of = (mode: ProtectedPath["mode"]) => set.filter((e) => e.mode === mode).map((e) => shown(e.path));
  return `hidden: ${of("hidden").join(", ") || "nothing"}; read-only: ${of("read-only").join(", ") || "nothing"}`;
}
