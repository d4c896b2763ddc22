import fs from "node:fs";
import path from "node:path";
import { type AgentShell, agentShellOf } from "../governance/stop/agent-shell.ts";

/** How far up the process tree the CLI looks for a governed agent's shell (a shell in a script in a shell …). */
const MAX_ANCESTORS = 32;

/** The parent pid from `/proc/<pid>/stat` (the fields after the command name, which may contain spaces). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** A process's start-up environment (Linux; what it was started with, whatever it unset since). */
function environOf(pid: number): Record<string, string> {
  try {
    const env: Record<string, string> = {};
    for (const entry of fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
      const eq = entry.indexOf("=");
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  } catch {
    return {};
  }
}

function sameProject(a: string | null, dir: string): boolean {
  if (a === null) return true;
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(a) === real(dir);
}

/**
 * The governed session whose shell runs this CLI for project `dir`, if any: the marker the plugin's `shell.env`
 * hook set (governance/stop/agent-shell.ts), in this process's environment or, on Linux, in the start-up
 * environment of any ancestor (so `env -u`/`unset` in the agent's shell does not hide it). A marker for another
 * project does not count: a test suite an agent runs may drive the CLI against its own temporary projects.
 */
export function agentShell(dir: string, env: NodeJS.ProcessEnv = process.env): AgentShell | undefined {
  const own = agentShellOf(env);
  if (own && sameProject(own.project, dir)) return own;
  if (process.platform !== "linux") return undefined;
  let pid = parentOf(process.pid);
  for (let i = 0; pid !== undefined && pid > 1 && i < MAX_ANCESTORS; i++) {
    const found = agentShellOf(environOf(pid));
    if (found && sameProject(found.project, dir)) return found;
    pid = parentOf(pid);
  }
  return undefined;
}
