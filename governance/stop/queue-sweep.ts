import { readdir, rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { GovernancePaths } from "../storage/governance-paths.ts";
import type { Clock } from "../time/clock.ts";
import { claimAll, type Directive } from "./directive-queue.ts";

const SESSION_DIR = /^ses_[A-Za-z0-9]+$/;

/**
 * What may still read a session's queue: it `runs` (everything stays); it is `resumable` (nothing runs in it, but the
 * next process to host it reads its parent notes — issue 26 item 3 — so only its notes stay); or it never will, and
 * the string says why (its work ended, it was stopped, archived or is unknown).
 */
export type QueueFate = "runs" | "resumable" | { drop: string };

/**
 * The directives left for a session that will never read them (its work ended, it was archived or deleted, its
 * process died with a turn under way): claimed — so they are done with, once, audited by the caller with the reason —
 * and its emptied queue folder removed. A resumable session keeps its parent notes (`notify`) for the process that
 * hosts it next; its stop, inject and budget directives are dropped. Returns what was dropped, per session.
 */
export async function sweepQueues(
  paths: GovernancePaths,
  fate: (sessionId: string) => QueueFate,
  opts: { clock: Clock; until?: () => boolean },
): Promise<{ sessionId: string; dropped: Directive[]; because: string }[]> {
  let ids: string[];
  try {
    ids = (await readdir(paths.queues)).filter((n) => SESSION_DIR.test(n));
  } catch {
    return [];
  }
  const out: { sessionId: string; dropped: Directive[]; because: string }[] = [];
  for (const id of ids) {
    if (opts.until?.()) break;
    const f = fate(id);
    if (f === "runs") continue;
    const kinds = f === "resumable" ? (["stop", "inject", "budget"] as const) : undefined;
    const because = f === "resumable" ? "session no longer runs" : f.drop;
    const dropped = await claimAll(paths, id, { clock: opts.clock, ...(kinds ? { kinds } : {}) }).catch(() => []);
    if (dropped.length > 0) out.push({ sessionId: id, dropped, because });
    await removeQueueFolder(paths, id);
  }
  return out;
}

/** Removes a session's queue folder if nothing is left in it (a directive arriving meanwhile keeps it). */
export async function removeQueueFolder(paths: GovernancePaths, sessionId: string): Promise<void> {
  const dir = join(paths.queues, sessionId);
  await rmdir(join(dir, ".claimed")).catch(() => undefined);
  await rmdir(dir).catch(() => undefined);
}
