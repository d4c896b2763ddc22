import { existsSync } from "node:fs";
import type { AuditEvent, AuditLog } from "../storage/audit-log.ts";
import type { GovernancePaths } from "../storage/governance-paths.ts";
import { enqueue, type StopDirective } from "./directive-queue.ts";

/**
 * A stop is acknowledged (issue 41 §4): a user who runs `stop` learns whether the OpenCode process hosting the session
 * took the request, not only that a file was written — a helper that deletes its own queue files swallowed 5 of 17
 * stops while the CLI said "stop requested". The hosting process's audit line naming the request is the
 * acknowledgement: begun (`session_stop_requested`), raised (`stop_escalated`), covered by the stop already under way
 * (`stop_covered`), or claimed for a session with nothing to stop (`stop_ignored`).
 */
export type StopAck =
  | { taken: true; outcome: "begun" | "escalated" | "covered"; level: number }
  | { taken: true; outcome: "ignored"; because: string }
  | { taken: false };

/** A stop request written to a session's queue, waiting for its acknowledgement. */
export type QueuedStop = { sessionId: string; directive: StopDirective; file: string; hostPid: number | null };

/** What the audit log says of one request. Pure. */
export function ackOf(events: readonly AuditEvent[], requestId: string): StopAck {
  for (const e of events) {
    const d = e as AuditEvent & Record<string, unknown>;
    if (e.type === "session_stop_requested" && d.requestId === requestId) return { taken: true, outcome: "begun", level: Number(d.level) };
    if (e.type === "stop_escalated" && d.requestId === requestId) return { taken: true, outcome: "escalated", level: Number(d.to) };
    if (e.type === "stop_covered" && d.requestId === requestId) return { taken: true, outcome: "covered", level: Number(d.pendingLevel) };
    if (e.type === "stop_ignored" && Array.isArray(d.requestIds) && d.requestIds.includes(requestId))
      return { taken: true, outcome: "ignored", because: String(d.because ?? "not running") };
  }
  return { taken: false };
}

/** How long `stop` waits for the hosting process by default: a watched queue is taken in well under a second. */
export const STOP_ACK_WAIT_MS = 4_000;
const POLL_MS = 100;
/** A request file gone this long without an acknowledgement was removed by someone else: written again. */
const GONE_GRACE_MS = 400;

/**
 * Waits until every queued stop is acknowledged or `waitMs` has passed, reading the audit log every 100 ms (no fixed
 * sleep: it returns as soon as the last acknowledgement is there). A request whose file vanished unacknowledged — not
 * claimed by the plugin, which acknowledges what it claims — is written again under the same id (the plugin begins
 * each id once), so a process that deletes queue files must win every race to swallow a stop.
 */
export async function awaitStopAcks(
  ctx: { paths: GovernancePaths; audit: AuditLog },
  queued: readonly QueuedStop[],
  opts: { waitMs?: number } = {},
): Promise<StopAck[]> {
  const deadline = Date.now() + (opts.waitMs ?? STOP_ACK_WAIT_MS);
  const goneSince = new Map<string, number>();
  const files = new Map(queued.map((q) => [q.directive.id, q.file]));
  for (;;) {
    const events = await ctx.audit.read().catch(() => []);
    const acks = queued.map((q) => ackOf(events, q.directive.id));
    if (acks.every((a) => a.taken) || Date.now() >= deadline) return acks;
    for (const [i, q] of queued.entries()) {
      if (acks[i]!.taken) continue;
      const file = files.get(q.directive.id)!;
      if (existsSync(file)) {
        goneSince.delete(q.directive.id);
        continue;
      }
      const since = goneSince.get(q.directive.id) ?? Date.now();
      goneSince.set(q.directive.id, since);
      if (Date.now() - since < GONE_GRACE_MS) continue;
      const again = await enqueue(ctx.paths, q.sessionId, q.directive).catch(() => undefined);
      if (again?.ok) files.set(q.directive.id, again.file);
      goneSince.delete(q.directive.id);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The session is stopping or stopped after this request: taken, or found already stopped (CLI exit code, dashboard status). */
export function stopHeld(ack: StopAck): boolean {
  return ack.taken && (ack.outcome !== "ignored" || ack.because === "already stopped");
}

/** The user's words for one acknowledgement (CLI and dashboard). */
export function ackLine(q: QueuedStop, ack: StopAck): string {
  if (ack.taken) {
    if (ack.outcome === "ignored") return `nothing to stop in ${q.sessionId}: ${ack.because}`;
    if (ack.outcome === "begun") return `stop begun (level ${ack.level}) for ${q.sessionId}`;
    if (ack.outcome === "escalated") return `stop raised to level ${ack.level} for ${q.sessionId}`;
    return `stop already under way (level ${ack.level}) for ${q.sessionId}`;
  }
  const who = q.hostPid ? `OpenCode (pid ${q.hostPid})` : "any running OpenCode process";
  return (
    `stop for ${q.sessionId} not taken yet by ${who}: the request stays queued and is begun at the session's next tool ` +
    `call if that process runs it. If nothing changes, run the stop again, press Escape in that OpenCode, or end the process${q.hostPid ? ` (kill ${q.hostPid})` : ""}`
  );
}
