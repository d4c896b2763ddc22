import path from "node:path";
import { coverageLine, CoverageSummary } from "../governance/session/governance-coverage.ts";
import { readRegularFile } from "../governance/storage/safe-fs.ts";

/**
 * The plugin's coverage summary (`coverage.json` in the state folder, plugin/sessions/coverage-watch.ts): what the host
 * reported against what governance did for the last session. Read like every state file (a regular file, bounded);
 * anything unreadable or unexpected is "no summary", never an error.
 */
export async function readCoverage(root: string): Promise<CoverageSummary | undefined> {
  try {
    const parsed = CoverageSummary.safeParse(JSON.parse(await readRegularFile(path.join(root, "coverage.json"), 64 * 1024)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "last session ses_…: prefix on 14/14 steps, 9/9 tool calls gated, 2/2 children linked (in the OpenCode process that
 * last ran it)", or undefined. The counts are the plugin's, per OpenCode process: a session resumed with `opencode -s`
 * starts again at 0/0 — the line says so (the newcomer walk read "0/0 children linked" for a session with three). Per
 * process is what the check is for: did THIS process's plugin see and govern what its host did.
 */
export function lastSessionLine(summary: CoverageSummary | undefined): string | undefined {
  const last = summary?.last;
  return last ? `last session ${last.sessionId}: ${coverageLine(last)} (in the OpenCode process that last ran it)` : undefined;
}
