import type { RecordTrust } from "../storage/record-attestation.ts";
import { cutOffByCrash } from "./crash-recovery.ts";
import { classifyResume } from "./resume-window.ts";
import { isIdle } from "./running.ts";
import type { SessionRecord } from "./session-record.ts";

/**
 * A root session `opencode -s <id>` brings back with a resume context, and why it qualifies: `interrupted` (Escape, an
 * abort, an exit mid-turn, or a crash) and `crashed` (its process died mid-turn: crash-recovery.ts `cutOffByCrash`).
 */
export type ResumableRoot = { record: SessionRecord; interrupted: boolean; crashed: boolean };

/**
 * The root sessions the user can resume, most recently active first: interrupted (Escape, an abort, cut off by its
 * process's ordinary exit) or idle within the resume window (`resume.minIdle`–`resume.maxIdle`, 1 h–48 h by default),
 * as the plugin decides it when the session comes back — a root whose turn a crash cut off included. Never one whose
 * turn is still under way, nor a child a crash orphaned, nor one whose task completed, nor one the user stopped. Only records this user's
 * governance wrote (`trust`): a planted record is never offered to the user as one of theirs (docs/security.md). The
 * one rule behind `resume`, the dashboard's list and the plugin's notice at start.
 */
export function resumableRoots(
  records: readonly SessionRecord[],
  opts: { now: number; minIdleMs: number; maxIdleMs: number; trust: RecordTrust },
): ResumableRoot[] {
  const trusted = records.filter((r) => opts.trust.verified(r));
  const ids = new Set(trusted.map((r) => r.sessionId));
  return (
    trusted
      .filter((r) => !r.parentId || !ids.has(r.parentId))
      // A root the user stopped refuses every tool call from then on (its stop is final): offering it would send the
      // user to a session that can only answer "terminated" (issue 39 walk).
      .filter((r) => r.control !== "completed" && r.control !== "stopped" && (r.control !== "orphaned" || cutOffByCrash(r)))
      .map((record) => {
        const crashed = cutOffByCrash(record);
        return { record, interrupted: crashed || record.state === "interrupted", crashed };
      })
      // A turn still under way is not something to resume, however long it has run (found by the model-based test).
      .filter(({ record, interrupted }) => interrupted || isIdle(record))
      .filter(
        ({ record, interrupted }) =>
          classifyResume({ lastActivityAt: record.lastActivityAt, now: opts.now, interrupted, minIdleMs: opts.minIdleMs, maxIdleMs: opts.maxIdleMs }) ===
          "resume",
      )
      .sort((a, b) => b.record.lastActivityAt - a.record.lastActivityAt)
  );
}

/** The exact command that resumes a session. */
export const resumeCommand = (sessionId: string) => `opencode -s ${sessionId}`;
