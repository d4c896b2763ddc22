import { isSessionId, type SessionRecord } from "../../governance/session/session-record.ts";
import type { Governor } from "../governor.ts";
import { parseEvent } from "../opencode-events.ts";
import type { StopController } from "../stop-controller.ts";

/**
 * The `event` hook: session lifecycle from OpenCode's bus. `session.idle` only ends a turn (it fires after every
 * turn); an abort arrives as `session.error` MessageAbortedError; compaction as `session.compacted`.
 */
export async function onEvent(gov: Governor, stops: StopController, raw: unknown): Promise<void> {
  const event = parseEvent(raw);
  if (!event || !isSessionId(event.sessionId)) return;
  const id = event.sessionId;
  const at = gov.clock.now();
  if (event.type === "created") {
    await gov.created(id, () => createRecord(gov, id, event.parentId, event.agent));
    return;
  }
  if (event.type === "status") {
    if (event.status === "idle") gov.status.delete(id);
    else gov.status.set(id, event.status);
    stops.onStatus(id, event.status);
    return;
  }
  await gov.ensureSeen(id);
  switch (event.type) {
    case "aborted":
      await gov.apply(id, { type: "aborted", at });
      await stops.onAborted(id);
      return;
    case "errored":
      await gov.apply(id, { type: "errored", at, message: event.name });
      return;
    case "idle":
      await gov.apply(id, { type: "idle", at });
      await stops.onIdle(id);
      return;
    case "compacted":
      if (gov.compactedByHook.delete(id)) return; // an automatic compaction, already recorded
      await gov.apply(id, { type: "compacted", at, trigger: "summarize" });
      return;
    case "todos":
      await gov.apply(id, { type: "todo_updated", at, total: event.total, open: event.open });
      return;
  }
}

/** S1 for a new session; a child is linked on both sides (child names its parent, parent lists its child). */
async function createRecord(gov: Governor, id: string, parentId: string | null, agent: string | null): Promise<SessionRecord | undefined> {
  const parent = parentId && isSessionId(parentId) ? ((await gov.store.read(parentId)) ?? (await gov.ensureSeen(parentId))) : undefined;
  const record = await gov.apply(id, {
    type: "created",
    at: gov.clock.now(),
    parentId: parentId && isSessionId(parentId) ? parentId : null,
    agent,
    ...(parent ? { parentRecord: { depth: parent.depth, rootId: parent.rootId } } : {}),
  });
  if (record && parent) {
    const link = { sessionId: id, agent, createdAt: record.createdAt, closedAt: null, outcome: "running" as const };
    await gov.update(parent.sessionId, (p) =>
      p && !p.children.some((c) => c.sessionId === id) ? { ...p, children: [...p.children, link] } : p,
    );
    await gov.record("child_linked", { sessionId: parent.sessionId, childId: id, agent, depth: record.depth });
  }
  return record;
}
