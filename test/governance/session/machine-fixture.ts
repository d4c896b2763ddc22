import { expect } from "vitest";
import { type Effect, type SessionEvent, type SessionEventType, transition } from "../../../governance/session/session-machine.ts";
import type { SessionRecord } from "../../../governance/session/session-record.ts";
import { CHILD_ID, HOUR, MINUTE, ROOT_ID, T0, rehydrate } from "../fixtures/records.ts";

/** What the session-machine tests share: the context, one sample of every event, and a runner. */
export const config = { minIdleMs: 1 * HOUR, maxIdleMs: 48 * HOUR };
export const ctx = { config, sessionId: ROOT_ID };
export const childCtx = { config, sessionId: CHILD_ID };
export const AT = T0 + MINUTE;

export const created = { type: "created", at: AT, parentId: null, agent: "coordinator" } satisfies SessionEvent;
export const sample: Record<SessionEventType, SessionEvent> = {
  created,
  first_seen: { type: "first_seen", at: AT, agent: "coordinator" },
  prompt: { type: "prompt", at: AT },
  model_step: { type: "model_step", at: AT },
  tool_before: { type: "tool_before", at: AT, tool: "read", callId: "call_1", summary: "README.md" },
  idle: { type: "idle", at: AT },
  aborted: { type: "aborted", at: AT },
  errored: { type: "errored", at: AT, message: "provider overloaded" },
  compacted: { type: "compacted", at: AT, trigger: "auto" },
  todo_updated: { type: "todo_updated", at: AT, total: 4, open: 1 },
  agent_learned: { type: "agent_learned", at: AT, agent: "planner" },
  action_remembered: { type: "action_remembered", at: AT, action: "delegated to planner" },
};

/** Feeds events in order; optionally through a disk round trip before each one (a process restart). */
export function run(events: SessionEvent[], opts: { start?: SessionRecord; roundTrip?: boolean; c?: typeof ctx } = {}) {
  let record = opts.start;
  const effects: Effect[] = [];
  for (const ev of events) {
    const r = transition(opts.roundTrip && record ? rehydrate(record) : record, ev, opts.c ?? ctx);
    expect(r.illegal).toBeUndefined();
    record = r.next;
    effects.push(...r.effects);
  }
  return { record: record!, effects };
}
export const audits = (effects: Effect[]) => effects.flatMap((e) => (e.type === "audit" ? [e.event] : []));
