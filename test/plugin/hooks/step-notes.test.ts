import { expect, test } from "vitest";
import { enqueue } from "../../../governance/stop/directive-queue.ts";
import { NOTE_PLACEMENT, stepNotes } from "../../../plugin/hooks/step-notes.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { events, type PluginFixture, pluginFixtureEach, ROOT, CHILD } from "../fixture.ts";

let f: PluginFixture;
pluginFixtureEach(async (made) => {
  f = made;
  await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
  await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "governance-executor" }));
  await enqueue(f.rt.ctx.paths, ROOT, { kind: "notify", id: `notify-${CHILD}`, at: f.clock.now(), childId: CHILD, how: "ladder" });
  f.rt.stops.inbox.mark(ROOT);
});

/** Where a parent's note goes on a model step is one decision (issue 25 item 4), not the shape of a host's messages. */
test("NOTE_PLACEMENT: OpenCode 1 puts a parent's note on the last tool result, OpenCode 2 at the head of the status note", async () => {
  expect(NOTE_PLACEMENT).toEqual({ 1: "last_tool_result", 2: "status_note" });
  const v1 = await stepNotes(f.rt, { sessionId: ROOT, agent: "governance-coordinator" });
  expect(v1.onToolResult).toContain("SUBAGENT");
  expect(v1.statusNote ?? "").not.toContain("SUBAGENT");
  f.rt.host.line = 2;
  const v2 = await stepNotes(f.rt, { sessionId: ROOT, agent: "governance-coordinator" });
  expect(v2.onToolResult).toBeUndefined();
  expect(v2.statusNote?.startsWith(v1.onToolResult ?? "?")).toBe(true);
});
