import type { Anchor } from "../governance/config/config.ts";
import { cutOffWork } from "../governance/delegation/descendants.ts";
import { idleMs } from "../governance/session/resume-window.ts";
import { resumableRoots, resumeCommand } from "../governance/session/resumable-roots.ts";
import { type SessionStatus, sessionStatus } from "../governance/session/running.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import type { RecordTrust } from "../governance/storage/record-attestation.ts";
import { buildResumeContext } from "../governance/texts/resume-context.ts";

/**
 * A root session the user can bring back with `opencode -s <id>` and get a resume context: interrupted (Escape,
 * abort, or cut off by its process's ordinary exit) or idle between `resume.minIdle` and `resume.maxIdle` (1 h–48 h by
 * default), as the plugin decides it — one whose turn a crash cut off included. Never one whose turn is still under way.
 * Stable JSON shape of `resume --json` and of the dashboard's "Resumable" list.
 */
export type Resumable = {
  sessionId: string;
  /** OpenCode's title of the session, or null. */
  title: string | null;
  agent: string | null;
  state: string;
  /** Its word, as every other surface says it (`sessionStatus`): interrupted, idle, or orphaned when a crash cut it off. */
  status: SessionStatus;
  /** What `resume` and the dashboard print: the status, and for a crash "(cut off by a crash)". */
  word: string;
  interrupted: boolean;
  /** Its turn was cut off by a crash (its process died mid-turn); `interrupted` is true too. */
  crashed: boolean;
  lastActivityAt: number;
  idleMs: number;
  /** The exact command that resumes it. */
  command: string;
  /** The resume context the plugin will put before the model's first request, as it would be built now. */
  context: string;
};

/**
 * Resumable root sessions (governance/session/resumable-roots.ts decides which), most recently active first, each with
 * the resume context it would bring. Pure: the caller passes the records, the config and now. `unverifiedRecords`
 * counts the records left out because this user's governance did not write them.
 */
export function resumableSessions(
  records: readonly SessionRecord[],
  opts: { now: number; minIdleMs: number; maxIdleMs: number; anchors: readonly Anchor[]; trust: RecordTrust; timeZone?: string },
): Resumable[] {
  const byId = new Map(records.filter((r) => opts.trust.verified(r)).map((r) => [r.sessionId, r]));
  return resumableRoots(records, opts).map(({ record: r, interrupted, crashed }) => {
    const idle = idleMs(r.lastActivityAt, opts.now);
    const context = buildResumeContext({
      idleMs: idle,
      previousActivityAt: r.lastActivityAt,
      previousState: interrupted && !crashed ? (r.stateBeforeInterrupt ?? "interrupted") : r.state,
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
      status: sessionStatus(r),
      word: crashed ? `${sessionStatus(r)} (cut off by a crash)` : sessionStatus(r),
      interrupted,
      crashed,
      lastActivityAt: r.lastActivityAt,
      idleMs: idle,
      command: resumeCommand(r.sessionId),
      context,
    };
  });
}

/** How many records the resumable list left out because this user's governance did not write them. */
export function unverifiedRecords(records: readonly SessionRecord[], trust: RecordTrust): number {
  return records.reduce((n, r) => (trust.verified(r) ? n : n + 1), 0);
}
