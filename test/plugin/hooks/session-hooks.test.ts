import { describe, expect, test } from "vitest";
import { GOVERNANCE_PREFIX_HEADING } from "../../../governance/texts/governance-prefix.ts";
import { POST_COMPACT_HEADING } from "../../../governance/texts/post-compact-reminder.ts";
import { promptAdmitted } from "../../../plugin/hooks/prompt.ts";
import { compactionContext, markAutoCompaction } from "../../../plugin/hooks/compacting.ts";
import { configHook } from "../../../plugin/opencode-1/host-facts.ts";
import { onEvent } from "../../../plugin/opencode-1/event-source.ts";
import { messagesTransform, Summarizing } from "../../../plugin/opencode-1/model-step.ts";
import { systemTransform } from "../../../plugin/opencode-1/model-step.ts";
import { toolBefore } from "../../../plugin/opencode-1/tool-calls.ts";
import { events, type PluginFixture, pluginFixture, pluginFixtureEach, ROOT, CHILD } from "../fixture.ts";

let f: PluginFixture;
pluginFixtureEach((made) => (f = made));

const record = (id: string) => f.rt.sessions.peek(id);

describe("event hook", () => {
  test("session.created links a child on both sides, once", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "governance-high" }));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "governance-high" }));
    expect(record(CHILD)).toMatchObject({ parentId: ROOT, depth: 1, level: 2, rootId: ROOT });
    expect(record(ROOT)?.children).toEqual([{ sessionId: CHILD, agent: "governance-high", createdAt: f.clock.now(), closedAt: null, outcome: "running" }]);
    expect((await f.audit("child_linked")).map((e) => [e.sessionId, e.childId])).toEqual([[ROOT, CHILD]]);
  });

  test("idle ends a turn, an abort interrupts, an error is only logged, todos are counted", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.idle(ROOT));
    expect(record(ROOT)?.state).toBe("between_turn");
    await onEvent(f.rt, events.errored(ROOT));
    expect(record(ROOT)?.state).toBe("between_turn");
    await onEvent(f.rt, events.todos(ROOT, ["completed", "pending", "in_progress", "cancelled"]));
    expect(record(ROOT)?.todo).toEqual({ total: 4, open: 2, atToolCalls: 0 });
    await onEvent(f.rt, events.aborted(ROOT));
    expect(record(ROOT)?.state).toBe("interrupted");
    expect((await f.audit()).map((e) => e.type)).toEqual(expect.arrayContaining(["session_error", "session_aborted"]));
  });

  test("an abort of the parent records its running child interrupted and closes the link", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await onEvent(f.rt, events.aborted(ROOT));
    expect(record(CHILD)?.state).toBe("interrupted");
    expect((await f.rt.ctx.store.read(ROOT))?.children[0]).toMatchObject({ outcome: "aborted", closedAt: f.clock.now() });
    f.busy.add(CHILD);
    await f.timers.advance(1_000);
    await f.rt.ctx.sink.settle();
    expect(f.calls.aborts).toEqual([CHILD]);
    expect((await f.audit("descendant_aborted")).map((e) => e.sessionId)).toEqual([CHILD]);
  });

  test("the cascade of an abort runs once for the whole subtree: root → A → B interrupts and checks B once (issue 15)", async () => {
    const GRANDCHILD = "ses_grand0000000000000000000001";
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await onEvent(f.rt, events.created(GRANDCHILD, { parentID: CHILD }));
    await onEvent(f.rt, events.aborted(ROOT));
    expect([record(CHILD)?.state, record(GRANDCHILD)?.state]).toEqual(["interrupted", "interrupted"]);
    expect((await f.audit("descendants_interrupted")).map((e) => [e.sessionId, e.ids])).toEqual([[ROOT, [CHILD, GRANDCHILD]]]);
    expect((await f.audit("session_aborted")).map((e) => e.sessionId).sort()).toEqual([CHILD, GRANDCHILD, ROOT]);
    expect((await f.rt.ctx.store.read(CHILD))?.children[0]).toMatchObject({ sessionId: GRANDCHILD, outcome: "aborted" });
    f.busy.add(CHILD);
    f.busy.add(GRANDCHILD);
    await f.timers.advance(1_000);
    await f.rt.ctx.sink.settle();
    expect(f.calls.aborts).toEqual([CHILD, GRANDCHILD]);
    expect((await f.audit("descendant_aborted")).map((e) => e.sessionId)).toEqual([CHILD, GRANDCHILD]);
  });

  test("events that are not about a governed session are ignored", async () => {
    await onEvent(f.rt, { type: "session.idle", properties: { sessionID: "not-a-session" } });
    await onEvent(f.rt, { type: "message.updated", properties: {} });
    await onEvent(f.rt, null);
    expect(await f.audit("session_created")).toEqual([]);
  });
});

describe("compaction hooks", () => {
  test("the compacting hook adds anchors and recent actions; autocontinue then session.compacted count once", async () => {
    f.close();
    f = await pluginFixture({
      config: [
        "language: { communication: German, documents: English }",
        "anchors:",
        "  - { id: A-1, text: Never push to main, priority: critical }",
        "  - { id: A-2, text: Keep commits small, priority: normal }",
      ].join("\n"),
    });
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await f.rt.runner.dispatch(ROOT, { type: "action_remembered", at: f.clock.now(), action: "delegated to governance-executor" });
    const output = { context: [] as string[] };
    output.context.push(...(await compactionContext(f.rt, ROOT)));
    expect(output.context).toEqual(
      expect.arrayContaining([
        "Language: German (communication), English (documents). MUST MAINTAIN.",
        "Anchor [A-1] (critical): Never push to main",
        "Anchor [A-2] (normal): Keep commits small",
        "Recent action 1 of 1: delegated to governance-executor",
      ]),
    );
    expect(output.context.find((l) => l.startsWith("Agent:"))).toContain("governance-coordinator, PRIMARY (level 1)");
    await markAutoCompaction(f.rt, ROOT);
    await onEvent(f.rt, events.compacted(ROOT));
    expect(record(ROOT)).toMatchObject({ state: "compacted", compactedPending: true, counters: { compactions: 1 } });
    expect(record(ROOT)?.compactionHistory.map((c) => c.trigger)).toEqual(["auto"]);
  });
});

describe("transforms", () => {
  type Msg = { info: { sessionID: string; role: string; agent?: string; id: string }; parts: object[] };
  const step = async () => {
    const out = { system: ["You are an agent."] };
    const messages: Msg[] = [{ info: { sessionID: ROOT, role: "user", agent: "governance-coordinator", id: "msg_1" }, parts: [{ type: "text", text: "hi" }] }];
    await messagesTransform(f.rt, { messages });
    await systemTransform(f.rt, { sessionID: ROOT }, out);
    const tail = messages.length > 1 ? messages.at(-1)! : undefined;
    return {
      system: out.system.slice(1).join("\n"),
      first: messages[0]!.parts,
      tail: tail && (tail.parts[0] as { text: string }).text,
      tailRole: tail?.info.role,
    };
  };

  test("every step gets the same prefix; the post-compaction reminder rides in the status note until a turn with a step ends", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    const first = await step();
    expect(first.system).toContain(GOVERNANCE_PREFIX_HEADING);
    expect(first.system).toContain("governance-coordinator, PRIMARY");
    expect(first.tail).toBeUndefined();
    await onEvent(f.rt, events.compacted(ROOT));
    const after = await step();
    expect(after.first).toHaveLength(1);
    expect(after.tailRole).toBe("user");
    expect(after.tail).toContain("## Governance Status (opencode-governance)");
    expect(after.tail).toContain(POST_COMPACT_HEADING);
    expect(after.system).toBe(first.system);
    await onEvent(f.rt, events.idle(ROOT));
    expect((await step()).tail).toBeUndefined();
    expect(record(ROOT)?.counters.modelSteps).toBe(3);
  });

  test("a todo update changes the status note, never the system prompt (issue 16)", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    const before = await step();
    await onEvent(f.rt, events.todos(ROOT, ["pending", "completed"]));
    const after = await step();
    expect(after.system).toBe(before.system);
    expect(after.system).not.toContain("Todos");
    expect(after.tail).toContain("**Todos:** 1 open of 2.");
  });

  test("a coordinator whose first call is an edit: audited once, reminded in the status note (never the system prompt) until its turn ends", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    const before = await step();
    await toolBefore(f.rt, { tool: "edit", sessionID: ROOT, callID: "call_1" }, { args: { filePath: "a.ts" } });
    await toolBefore(f.rt, { tool: "edit", sessionID: ROOT, callID: "call_2" }, { args: { filePath: "b.ts" } });
    const after = await step();
    expect(after.system).toBe(before.system);
    expect(after.tail).toContain("**First action missed:** your first call was `edit`; as PRIMARY your first action is: Update the todo list (`todowrite`)");
    expect((await f.audit("first_action_missed")).map((e) => [e.sessionId, e.tool, e.role])).toEqual([[ROOT, "edit", "primary"]]);
    expect(record(ROOT)?.firstAction).toMatchObject({ tool: "edit", role: "primary", ok: false });
    await onEvent(f.rt, events.idle(ROOT));
    expect((await step()).tail).toBeUndefined();
  });

  test("a new record stores the config's phase (S1-R03)", async () => {
    await f.close();
    f = await pluginFixture({ config: "phase: planning\n" });
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await step();
    expect(record(ROOT)?.phase).toEqual({ phase: "planning", at: f.clock.now() });
    expect((await f.audit("session_created"))[0]).toMatchObject({ phase: "planning" });
  });

  test("a prompt after 2 h in the same process brings the resume context; the turn's end retires it (issue 21)", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await step();
    await onEvent(f.rt, events.idle(ROOT));
    f.clock.set(f.clock.now() + 2 * 60 * 60_000);
    await promptAdmitted(f.rt, ROOT, "governance-coordinator");
    const resumed = await step();
    expect(resumed.tail).toContain("## Resumed Session (opencode-governance)");
    expect(resumed.tail).toMatch(/2 hours/);
    expect((await step()).tail).toBe(resumed.tail);
    await onEvent(f.rt, events.idle(ROOT));
    await promptAdmitted(f.rt, ROOT);
    expect((await step()).tail).toBeUndefined();
  });

  test("the summarizer's copy of the history gets no status note", async () => {
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await onEvent(f.rt, events.todos(ROOT, ["pending"]));
    const summarizing = new Summarizing();
    summarizing.begin(ROOT); // what the OpenCode 1 entry does at the compacting hook (plugin/opencode-1/setup.ts)
    await compactionContext(f.rt, ROOT);
    const messages: Msg[] = [{ info: { sessionID: ROOT, role: "user", id: "msg_1" }, parts: [{ type: "text", text: "hi" }] }];
    await messagesTransform(f.rt, { messages }, summarizing);
    expect(messages).toHaveLength(1);
    expect((await step()).tail).toContain("**Todos:** 1 open of 1.");
  });

  test("after a compaction, the prefix, the reminder and the compaction context state the same role (issue 15 item 1)", async () => {
    // OpenCode's built-in `general` is offered no `task` tool: the config hook learns that, and every text must say LEAF.
    await configHook(f.rt.ctx, { agent: {} });
    await onEvent(f.rt, events.created(ROOT, { agent: "governance-coordinator" }));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT, agent: "general" }));
    const compaction = { context: [] as string[] };
    compaction.context.push(...(await compactionContext(f.rt, CHILD)));
    await onEvent(f.rt, events.compacted(CHILD));
    const out = { system: [] as string[] };
    await systemTransform(f.rt, { sessionID: CHILD }, out);
    const messages = [{ info: { sessionID: CHILD, role: "user", agent: "general", id: "msg_1" }, parts: [{ type: "text", text: "go" }] as object[] }];
    await messagesTransform(f.rt, { messages });
    const note = (messages.at(-1)!.parts[0] as { text: string }).text;
    const reminder = note.slice(note.indexOf(POST_COMPACT_HEADING));
    const you = "general, LEAF (level 2";
    expect(out.system.join("\n")).toContain(you);
    expect(reminder).toContain(you);
    expect(reminder).toContain("You are a LEAF agent: you cannot delegate");
    expect(compaction.context.join("\n")).toContain(`Agent: ${you}). You are a LEAF agent`);
    for (const text of [out.system.join("\n"), reminder ?? "", compaction.context.join("\n")]) expect(text).not.toContain("DELEGATING");
  });

  test("housekeeping prompts (title, summary) get no prefix and count no step", async () => {
    await onEvent(f.rt, events.created(ROOT));
    const out = { system: ["You are a title generator. Output a title."] };
    await systemTransform(f.rt, { sessionID: ROOT }, out);
    expect(out.system).toHaveLength(1);
    expect(record(ROOT)?.counters.modelSteps).toBe(0);
  });

  test("the agent is learned from the user messages", async () => {
    await onEvent(f.rt, events.created(ROOT));
    const messages = [{ info: { sessionID: ROOT, role: "user", agent: "governance-planner", id: "msg_1" }, parts: [] as object[] }];
    await messagesTransform(f.rt, { messages });
    expect(record(ROOT)?.agent).toBe("governance-planner");
  });
});

describe("exit paths end the bookkeeping (issue 21 item 3, seed 002)", () => {
  const link = async () => (await f.rt.ctx.store.read(ROOT))?.children[0];

  test("a child's error ends its task: ended `failed` (not running), the parent's link `failed`, its queue done with", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await onEvent(f.rt, events.errored(CHILD, "APIError"));
    expect(f.onDisk(CHILD)).toMatchObject({ control: "completed", end: { how: "failed", detail: "APIError", at: f.clock.now() } });
    expect(await link()).toMatchObject({ outcome: "failed", closedAt: f.clock.now() });
    expect((await f.audit("session_ended")).map((e) => [e.sessionId, e.how])).toEqual([[CHILD, "failed"]]);
  });

  test("a root session's error leaves it open (its user may prompt again)", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.errored(ROOT, "APIError"));
    expect(f.onDisk(ROOT)).toMatchObject({ control: "active" });
    expect(f.onDisk(ROOT).end ?? null).toBeNull();
  });

  test("session.deleted ends a running child (`deleted`, link `aborted`) and a root alike; a second deletion changes nothing", async () => {
    await onEvent(f.rt, events.created(ROOT));
    await onEvent(f.rt, events.created(CHILD, { parentID: ROOT }));
    await onEvent(f.rt, events.deleted(CHILD));
    expect(f.onDisk(CHILD)).toMatchObject({ control: "completed", end: { how: "deleted" } });
    expect(await link()).toMatchObject({ outcome: "aborted" });
    await onEvent(f.rt, events.deleted(CHILD));
    await onEvent(f.rt, events.deleted(ROOT));
    expect(f.onDisk(ROOT)).toMatchObject({ control: "completed", end: { how: "deleted" } });
    expect((await f.audit("session_ended")).map((e) => [e.sessionId, e.how])).toEqual([
      [CHILD, "deleted"],
      [ROOT, "deleted"],
    ]);
  });

  test("a deletion of a session governance never saw writes nothing", async () => {
    await onEvent(f.rt, events.deleted(CHILD));
    expect(await f.rt.ctx.store.read(CHILD)).toBeUndefined();
  });
});
