import { readFileSync } from "node:fs";

/**
 * The command line the user started OpenCode with. OpenCode 1.18 runs its server — and so this plugin — in a worker
 * thread of the TUI's process, whose `process.argv` is the worker's own (`bun …/tui/worker.js`); the process's command
 * line in /proc is the user's (`opencode -s <id>`). Elsewhere (no /proc) `process.argv`.
 */
export function processCommandLine(): string[] {
  try {
    const raw = readFileSync("/proc/self/cmdline", "utf8");
    const args = raw.split("\0").filter((a) => a.length > 0);
    if (args.length > 0) return args;
  } catch {
    // no /proc: below
  }
  return process.argv;
}
