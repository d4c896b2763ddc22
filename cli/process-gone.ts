import { isRunningSession } from "../governance/session/running.ts";
import type { SessionRecord } from "../governance/session/session-record.ts";
import { ownerIsGone } from "../governance/storage/lock-owner.ts";

/**
 * Which records still say running while their OpenCode process is dead (a crash, a kill), looked up once per listing
 * so `status`, `sessions` and the dashboard give such a record the same word (`orphaned`, `sessionStatus`). Only
 * records that say running are looked at: a finished or idle one has nothing a dead process could have cut off.
 */
export async function processGoneOf(records: readonly SessionRecord[]): Promise<(r: SessionRecord) => boolean> {
  const gone = new Set<string>();
  for (const r of records) if (isRunningSession(r) && r.hostedBy && (await ownerIsGone(r.hostedBy))) gone.add(r.sessionId);
  return (r) => gone.has(r.sessionId);
}
