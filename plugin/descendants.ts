import type { SessionRecord } from "../governance/session/session-record.ts";
import type { InterruptedWork } from "../governance/texts/resume-context.ts";
import type { Governor } from "./governor.ts";

const MAX_WALK = 50;

/** The session's descendants in tree order (parents before children), read from their records. Bounded. */
export async function descendants(gov: Governor, root: SessionRecord): Promise<{ record: SessionRecord; outcome: string }[]> {
  const out: { record: SessionRecord; outcome: string }[] = [];
  const walk = async (r: SessionRecord): Promise<void> => {
    for (const link of r.children) {
      if (out.length >= MAX_WALK) return;
      const child = await gov.store.read(link.sessionId);
      if (!child) continue;
      out.push({ record: child, outcome: link.outcome });
      await walk(child);
    }
  };
  await walk(root);
  return out;
}

/** What a resume context reports as cut off: descendants that were running or were interrupted, with their last calls. */
export async function interruptedWork(gov: Governor, record: SessionRecord): Promise<InterruptedWork[]> {
  const all = await descendants(gov, record);
  return all
    .filter(({ record: r, outcome }) => outcome === "running" || outcome === "aborted" || r.state === "interrupted" || r.control === "stopped")
    .map(({ record: r }) => ({
      sessionId: r.sessionId,
      agent: r.agent,
      depth: r.depth,
      lastToolCall: r.lastToolCall ? { tool: r.lastToolCall.tool, summary: r.lastToolCall.summary, at: r.lastToolCall.at } : null,
      state: r.control === "stopped" ? "stopped" : r.state,
    }));
}

/**
 * Escape / abort of a session: OpenCode 1.18 cascades the abort to running descendants itself; governance records
 * each running descendant interrupted (keeping its last tool call for the resume context), then verifies that none
 * is still busy and aborts any that is.
 */
export async function interruptDescendants(gov: Governor, sessionId: string): Promise<void> {
  const root = await gov.store.read(sessionId);
  if (!root) return;
  const running = (await descendants(gov, root)).filter((d) => d.outcome === "running" && d.record.control !== "completed");
  const at = gov.clock.now();
  for (const { record } of running) {
    await gov.apply(record.sessionId, { type: "aborted", at });
    if (record.parentId) await gov.closeChild(record.parentId, record.sessionId, "aborted");
  }
  if (root.parentId) await gov.closeChild(root.parentId, sessionId, "aborted");
  if (running.length === 0) return;
  await gov.record("descendants_interrupted", { sessionId, count: running.length, ids: running.map((d) => d.record.sessionId) });
  const check = async () => {
    const status = await gov.api.status();
    const busy = running.map((d) => d.record.sessionId).filter((id) => status && status[id]);
    for (const id of busy) {
      await gov.api.abort(id);
      await gov.record("descendant_aborted", { sessionId: id, rootId: sessionId });
    }
  };
  setTimeout(() => void check().catch((e) => gov.reportHookError("interrupt-descendants", e)), 1_000).unref?.();
}
