import { formatIdle } from "../../governance/time/time-format.ts";
import { readConfig } from "../read-config.ts";
import { trustOf } from "../../governance/stop/control-requests.ts";
import { resumableSessions, unverifiedRecords } from "../resumable.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

/**
 * `resume [--json]`: root sessions that `opencode -s <id>` would bring back with a resume context (interrupted, or
 * idle within the resume window), each with that exact command and the context the plugin will build for it.
 */
export async function resumeCommand(c: CommandContext): Promise<number> {
  const config = await readConfig(c.store.paths.configFile);
  const now = c.control.clock.now();
  const records = await c.store.list();
  const trust = trustOf(c.control);
  const resumable = resumableSessions(records, {
    now,
    minIdleMs: config.config.resume.minIdle,
    maxIdleMs: config.config.resume.maxIdle,
    anchors: config.config.anchors,
    trust,
  });
  const unverified = unverifiedRecords(records, trust);
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, now, resumable, unverified });
    return 0;
  }
  const left =
    unverified > 0 ? `(${unverified} record(s) in the state folder not written by your governance — planted, copied in, or an older build's: not listed)` : "";
  if (resumable.length === 0) {
    c.io.line(["dim", "No resumable sessions: none is interrupted or idle within the resume window (resume.minIdle–resume.maxIdle)."]);
    if (left) c.io.line(["yellow", left]);
    return 0;
  }
  resumable.forEach((r, i) => {
    if (i > 0) c.io.line("");
    c.io.line(
      ["bold", r.command],
      r.title ? `   "${r.title}"` : "",
      // An idle root's word is its idle time ("idle 2 hours"), not "idle, idle 2 hours".
      `   ${r.agent ?? "?"}, ${r.status === "idle" ? "" : `${r.word}, `}idle ${formatIdle(r.idleMs)}`,
    );
    c.io.line(["dim", "  resume context:"]);
    for (const line of r.context.split("\n")) c.io.line("    ", line);
  });
  if (left) c.io.line(["yellow", left]);
  return 0;
}
