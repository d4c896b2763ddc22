import path from "node:path";
import { coverageLine, CoverageSummary } from "../governance/session/governance-coverage.ts";
import { readRegularFile } from "../governance/storage/safe-fs.ts";
import { formatIdle } from "../governance/time/time-format.ts";

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

/** The plugin's write delays (plugin/sessions/coverage-watch.ts), as `status` explains a missing line. */
const WRITES = "the plugin writes a session's counts 2 s after its first model step, then every 15 s and when OpenCode exits";

/**
 * What `status` says about coverage: always at least one line, so a newcomer never reads nothing and wonders (newcomer
 * walk 3: no line while the first session ran). The last session's counts, marked "still running" with their age when
 * that session is; a running root the summary does not cover yet, named with why; or why there is no summary at all.
 * `running` are the root sessions running now (live process); `bad` lines are the ones that report a gap.
 */
export function coverageStatusLines(
  summary: CoverageSummary | undefined,
  running: readonly string[],
  recorded: number,
  now: number,
): { text: string; bad: boolean }[] {
  const last = summary?.last;
  const lines: { text: string; bad: boolean }[] = [];
  if (summary && last) {
    const live = running.includes(last.sessionId);
    const text = live
      ? `session ${last.sessionId} (running): ${coverageLine(last)} as of ${formatIdle(now - summary.at)} ago`
      : (lastSessionLine(summary) ?? "");
    lines.push({ text, bad: last.gaps.length > 0 });
  }
  const uncounted = running.filter((id) => id !== last?.sessionId);
  if (uncounted.length > 0) {
    const who = uncounted.length === 1 ? `session ${uncounted[0]} is running` : `${uncounted.length} running sessions are`;
    lines.push({ text: `${who}, not counted yet: ${WRITES}`, bad: false });
  }
  if (lines.length === 0) lines.push({ text: recorded === 0 ? "no session has run in this project yet" : `no counts written yet: ${WRITES}`, bad: false });
  return lines;
}
