import { readdir, rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { GovernancePaths } from "../storage/governance-paths.ts";
import type { Clock } from "../time/clock.ts";
import { claimAll, type Directive } from "./directive-queue.ts";

const SESSION_DIR = /^ses_[A-Za-z0-9]+$/;

/**
 * The directives left for a session that will never read them (its work ended, it was archived or deleted, its
 * process died): claimed — so they are done with, once, audited by the caller — and its emptied queue folder
 * removed. `runs` says whether a session may still read its queue. Returns what was dropped, per session.
 */
export async function sweepQueues(
  paths: GovernancePaths,
  runs: (sessionId: string) => boolean,
  opts: { clock: Clock; until?: () => boolean },
): Promise<{ sessionId: string; dropped: Directive[] }[]> {
  let ids: string[];
  try {
    ids = (await readdir(paths.queues)).filter((n) => SESSION_DIR.test(n));
  } catch {
    return [];
  }
  const out: { sessionId: string; dropped: Directive[] }[] = [];
  for (const id of ids) {
    if (opts.until?.()) break;
    if (runs(id)) continue;
    const dropped = await claimAll(paths, id, { clock: opts.clock }).catch(() => []);
    if (dropped.length > 0) out.push({ sessionId: id, dropped });
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
