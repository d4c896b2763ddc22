import type { Anchor } from "../governance/config/config.ts";
import { cutOffWork } from "../governance/delegation/descendants.ts";
import { classifyResume, idleMs } from "../governance/session/resume-window.ts";
import { isIdle } from "../governance/session/running.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import type { RecordTrust } from "../governance/storage/record-attestation.ts";
import { buildResumeContext } from "../governance/texts/resume-context.ts";

/**
 * A root session the user can bring back with `opencode -s <id>` and get a resume context: interrupted (Escape,
 * abort, or cut off by its process's ordinary exit) or idle between `resume.minIdle` and `resume.maxIdle` (1 h–48 h by
 * default), as the plugin decides it. Never one whose turn is still under way, nor one a crash orphaned.
 * Stable JSON shape of `resume --json` and of the dashboard's "Resumable" list.
 */
export type Resumable = {
  sessionId: string;
  /** OpenCode's title of the session, or null. */
  title: string | null;
  agent: string | null;
  state: string;
  interrupted: boolean;
  lastActivityAt: number;
  idleMs: number;
  /** The exact command that resumes it. */
  command: string;
  /** The resume context the plugin will put before the model's first request, as it would be built now. */
  context: string;
};

/**
 * Resumable root sessions, most recently active first. Pure: the caller passes the records, the config and now.
 * Only records this user's governance wrote (`trust`) are listed, as `sessions` lists them: a planted record's agent
 * name or resume context never reaches the user as one of theirs (docs/security.md); `unverifiedRecords` counts them.
 */
export function resumableSessions(
  records: readonly SessionRecord[],
  opts: { now: number; minIdleMs: number; maxIdleMs: number; anchors: readonly Anchor[]; trust: RecordTrust; timeZone?: string },
): Resumable[] {
  const trusted = records.filter((r) => opts.trust.verified(r));
  const byId = new Map(trusted.map((r) => [r.sessionId, r]));
  return (
    trusted
      .filter((r) => !r.parentId || !byId.has(r.parentId))
      .filter((r) => r.control !== "completed" && r.control !== "orphaned")
      .map((r) => ({ r, interrupted: r.state === "interrupted" }))
      // A turn still under way is not something to resume, however long it has run (found by the model-based test).
      .filter(({ r, interrupted }) => interrupted || isIdle(r))
      .filter(
        ({ r, interrupted }) =>
          classifyResume({ lastActivityAt: r.lastActivityAt, now: opts.now, interrupted, minIdleMs: opts.minIdleMs, maxIdleMs: opts.maxIdleMs }) === "resume",
      )
      .sort((a, b) => b.r.lastActivityAt - a.r.lastActivityAt)
      .map(({ r, interrupted }) => {
        const idle = idleMs(r.lastActivityAt, opts.now);
        const context = buildResumeContext({
          idleMs: idle,
          previousActivityAt: r.lastActivityAt,
          previousState: interrupted ? (r.stateBeforeInterrupt ?? "interrupted") : r.state,
          interrupted,
          interruptedWork: cutOffWork(r, byId),
          anchors: opts.anchors,
          todo: r.todo,
          timeZone: opts.timeZone,
        });
        return {
          sessionId: r.sessionId,
          title: r.title ?? null,
          agent: r.agent,
          state: r.state,
          interrupted,
          lastActivityAt: r.lastActivityAt,
          idleMs: idle,
          command: `opencode -s ${r.sessionId}`,
          context,
        };
      })
  );
}

/** How many records the resumable list left out because this user's governance did not write them. */
export function unverifiedRecords(records: readonly SessionRecord[], trust: RecordTrust): number {
  return records.reduce((n, r) => (trust.verified(r) ? n : n + 1), 0);
}
