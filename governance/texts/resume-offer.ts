import type { LaunchResume } from "../host/launch-args.ts";
import type { ResumableRoot } from "../session/resumable-roots.ts";
import { resumeCommand } from "../session/resumable-roots.ts";
import { plainLine } from "../text-safety/untrusted-text.ts";

/**
 * What the user is told once when OpenCode starts in a project with a session to come back to (issue 39: after
 * Escape and quit, a new start said nothing): the most recent one by title and id, the exact command, and how many
 * more `opencode-governance resume` lists. The title is OpenCode's (a model may have written it): one plain line.
 */
export function resumeOfferText(roots: readonly ResumableRoot[]): string | undefined {
  const first = roots[0];
  if (!first) return undefined;
  const title = first.record.title ? `"${plainLine(first.record.title, 60)}" ` : "";
  const why = first.interrupted ? "was interrupted" : "is waiting";
  const more = roots.length > 1 ? ` (${roots.length - 1} more: opencode-governance resume)` : "";
  return `Session ${title}(${first.record.sessionId}) ${why} and can be resumed: ${resumeCommand(first.record.sessionId)}${more}`;
}

/**
 * The roots worth offering to a start: none when it continues the last session (`-c`: the user is already coming
 * back), and never the one it opens with `-s <id>` (that start is the resume).
 */
export function rootsToOffer(roots: readonly ResumableRoot[], launch: LaunchResume): ResumableRoot[] {
  if (launch.continues) return [];
  return roots.filter((r) => r.record.sessionId !== launch.session);
}
