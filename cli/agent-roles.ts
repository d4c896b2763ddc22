import fs from "node:fs";
import { type AgentRole, type GovernanceConfig, MAX_CONFIG_BYTES } from "../governance/config/config.ts";
import { DEFAULT_AGENTS } from "../governance/config/config-defaults.ts";
import { readOpencodeAgents } from "../governance/config/opencode-agents.ts";
import { deriveAgentPolicy, generatedOrigins, type HostAgentSettings, PROJECT_CONFIG_SHOWN, suggestedEntry } from "../governance/config/project-agents.ts";
import { entryLines, notNamedSentence } from "../governance/delegation/delegation-messages.ts";
import { roleOf } from "../governance/delegation/delegation-policy.ts";
import { describeTargets } from "../governance/text-safety/text-parts.ts";

/** OpenCode 1's own agents: always there, whether or not a file configures them. */
const OPENCODE_AGENTS = ["build", "plan", "general", "explore"];

/**
 * One agent as `doctor` and `status --explain` show it (docs/decisions/0030-project-agents-named.md): its role and
 * targets under the effective config, and where the role came from — an entry governance generated from OpenCode's
 * settings (its comment in governance.yaml), another governance.yaml entry, or `defaultRole` for an agent the file
 * does not name. `add`: the lines that would let such an agent delegate, when its OpenCode settings let it.
 */
export type AgentRoleRow = { agent: string; role: AgentRole; mayDelegateTo: string[]; from: string; add?: string[] };

function configText(file: string): string {
  try {
    const st = fs.lstatSync(file);
    return st.isFile() && st.size <= MAX_CONFIG_BYTES ? fs.readFileSync(file, "utf8") : "";
  } catch {
    return "";
  }
}

/** Every agent OpenCode's files define, OpenCode's own, and every agent the config names; sorted by name. */
export async function agentRoles(dir: string, configFile: string, config: GovernanceConfig, env: NodeJS.ProcessEnv = process.env): Promise<AgentRoleRow[]> {
  const host = new Map<string, HostAgentSettings>((await readOpencodeAgents(dir, env)).map((a) => [a.name, a]));
  const origins = generatedOrigins(configText(configFile));
  const names = [...new Set([...host.keys(), ...OPENCODE_AGENTS, ...Object.keys(config.agents)])].sort();
  return names.map((agent): AgentRoleRow => {
    const policy = roleOf(agent, config);
    const row = { agent, role: policy.role, mayDelegateTo: [...policy.mayDelegateTo] };
    if (Object.hasOwn(config.agents, agent)) {
      const generated = origins.get(agent);
      if (generated) return { ...row, from: `generated from OpenCode settings (${generated})` };
      const shipped = Object.hasOwn(DEFAULT_AGENTS, agent) ? ", as shipped" : "";
      return { ...row, from: `governance.yaml entry${shipped}` };
    }
    const settings = host.get(agent);
    const delegates = settings !== undefined && deriveAgentPolicy(settings).policy.role !== "leaf";
    return { ...row, from: `defaultRole: not named in ${PROJECT_CONFIG_SHOWN}`, ...(delegates ? { add: suggestedEntry(agent, settings) } : {}) };
  });
}

/** The table, then for each agent its OpenCode settings would let delegate but the file does not name: what to add. */
export function agentRoleLines(rows: readonly AgentRoleRow[]): string[] {
  const width = Math.min(32, Math.max(0, ...rows.map((r) => r.agent.length)));
  const lines = rows.map((r) => `  ${r.agent.padEnd(width)}  ${r.role.padEnd(10)}  ${`→ ${describeTargets(r.mayDelegateTo)}`.padEnd(16)}  ${r.from}`);
  for (const r of rows) if (r.add) lines.push(notNamedSentence({ callerAgent: r.agent, configFile: PROJECT_CONFIG_SHOWN }), ...entryLines(r.add));
  return lines;
}
