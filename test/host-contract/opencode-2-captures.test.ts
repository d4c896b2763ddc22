/**
 * A double replays captures (CONVENTIONS 20), checked three ways against what the real 2.0.15 sent
 * (scripts/capture-opencode-2.ts → test/fixtures/opencode-2.0.15/):
 * - every event the double emits is built from its capture (v2-captures.ts `replayEvent`); the double cannot add a key
 *   2.0.15 did not send (it throws) — so a capture that changes shape breaks the double's run here;
 * - every hook input the double builds itself has the keys and JSON types 2.0.15 sent, both ways (`shapeDrift`);
 * - the adapter's event parser reads what each captured event says (a `session.tool.success` by its `id`, usage,
 *   errors): the fields the adapter relies on are in the captures, not only in the double.
 * Values are not compared (ids, times, paths differ per run).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseV2Event } from "../../plugin/opencode-2/events.ts";
import { OpenCode2Double } from "./opencode-2-double.ts";
import { capture, captured, shapeDrift } from "./v2-captures.ts";

type Hooked = {
  session: { hook: (n: string, cb: (e: unknown) => void) => Promise<unknown> };
  tool: { hook: (n: string, cb: (e: unknown) => void) => Promise<unknown> };
};

describe("the OpenCode 2 double sends what the real 2.0.15 sent (test/fixtures/opencode-2.0.15)", () => {
  const host = new OpenCode2Double();
  const hooks = new Map<string, unknown>();
  let dir = "";
  let run: unknown;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-captures-"));
    // A recording plugin, as the capture script's: the first input of each hook (and variant), as JSON.
    const keep = (name: string) => (e: unknown) => void (hooks.has(name) || hooks.set(name, JSON.parse(JSON.stringify(e))));
    const after = (e: unknown) => {
      const { tool, status } = e as { tool: string; status: string };
      keep(`tool.execute.after${tool === "subagent" ? ".subagent" : ""}${status === "error" ? (tool === "subagent" ? "-refused" : ".error") : ""}`)(e);
    };
    const recorder = {
      default: {
        id: "recorder",
        async setup(ctx: Hooked) {
          for (const name of ["prompt", "context", "compaction"]) await ctx.session.hook(name, keep(`session.${name}`));
          await ctx.tool.hook("execute.before", keep("tool.execute.before"));
          await ctx.tool.hook("execute.after", after);
        },
      },
    };
    // Every hook and event the adapter reads, driven through the double once; an event it cannot replay throws here.
    run = await (async () => {
      await host.load(recorder, dir);
      const s = host.createSession({ directory: dir, agent: "build" });
      await host.prompt(s);
      host.startExecution(s);
      await host.request(s);
      await host.callTool(s, "shell", { command: "echo captured" });
      await host.callTool(s, "read", { path: "no-such-file.txt" }, () => {
        throw new Error("File not found: no-such-file.txt");
      });
      const spawn = host.callTool(s, "subagent", { agent: "general", description: "a child", prompt: "answer" });
      await host.drain();
      // The child's own spawn is refused by the host's depth limit (1) before a session exists, as 2.0.15's
      // permission refusal is: a `subagent` error result.
      await host.callTool(host.spawned[0]!, "subagent", { agent: "general", description: "too deep", prompt: "no" });
      host.children.get(host.spawned[0]!)?.("completed");
      await spawn;
      await host.request(s, "compaction");
      host.compactionEnded(s, "manual");
      host.succeed(s);
      host.startExecution(s);
      host.interrupt(s, "user");
      await host.drain();
    })().catch((error: unknown) => error);
  });
  afterAll(async () => {
    await host.unload();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the double's run replays every captured shape it emits (no key 2.0.15 did not send)", () => {
    expect(run).toBeUndefined();
  });

  const emitted = (type: string, child = false) => {
    const e = host.emitted.find((x) => x.type === type && child === (typeof (x.data as { parentID?: unknown })?.parentID === "string"));
    if (!e) throw new Error(`the double emitted no ${type}`);
    return JSON.parse(JSON.stringify(e)) as unknown;
  };

  const doubleEmits = [
    "session.created",
    "session.created.child",
    "session.execution.started",
    "session.execution.succeeded",
    "session.execution.interrupted",
    "session.step.started",
    "session.tool.success",
    "session.tool.failed",
    "session.compaction.ended",
  ];
  for (const name of doubleEmits)
    test(`event ${name}`, () => {
      const child = name.endsWith(".child");
      expect(shapeDrift(emitted(child ? name.slice(0, -".child".length) : name, child), capture(`event.${name}`))).toEqual([]);
    });

  // Hooks the double calls with inputs it builds itself (permission.evaluate is not modelled by the double: the
  // refusal before a child exists is proven on the binary, test/e2e/opencode-2-spawn-permission.test.ts).
  for (const name of captured("hook").filter((n) => n !== "permission.evaluate"))
    test(`hook input ${name}`, () => {
      expect(hooks.has(name), `the double never called ${name}`).toBe(true);
      expect(shapeDrift(hooks.get(name), capture(`hook.${name}`))).toEqual([]);
    });

  test("every captured event is one the double emits or the parser is checked on below", () => {
    const parsedOnly = ["session.execution.failed", "session.step.ended", "session.text.delta", "session.usage.updated"];
    expect(captured("event").sort()).toEqual([...doubleEmits, ...parsedOnly].sort());
  });

  test("the adapter's parser reads what 2.0.15 sent: the call id, the parent, usage, the error, the reason", () => {
    const parse = (name: string) => parseV2Event(capture(`event.${name}`));
    const data = (name: string) => (capture(`event.${name}`) as { data: Record<string, unknown> }).data;
    expect(data("session.tool.success").id, "the call id 2.0.15 sends").toEqual(expect.stringMatching(/^call_/));
    expect(parse("session.tool.success")).toEqual([
      { type: "output", sessionId: data("session.tool.success").sessionID, toolEnded: data("session.tool.success").id },
    ]);
    expect(parse("session.tool.failed")[0]).toMatchObject({ toolEnded: data("session.tool.failed").id });
    expect(parse("session.created.child")[0]).toMatchObject({ type: "created", parentId: data("session.created.child").parentID, agent: "general" });
    expect(parse("session.created")[0]).toMatchObject({ type: "created", parentId: null, agent: null });
    expect(parse("session.execution.interrupted")).toContainEqual(expect.objectContaining({ type: "aborted" }));
    expect(parse("session.execution.failed")[0]).toMatchObject({ type: "errored", name: "provider.invalid-request" });
    expect(parse("session.usage.updated")[0]).toMatchObject({ type: "usage", tokens: { input: 100, output: 10 } });
    expect(parse("session.step.ended")[0]).toMatchObject({ type: "step_model", tokens: { input: 100, output: 10 } });
    expect(parse("session.step.started")[0]).toMatchObject({ type: "output", step: true });
    expect(parse("session.text.delta")).toEqual([{ type: "output", sessionId: data("session.text.delta").sessionID }]);
    expect(parse("session.compaction.ended")[0]).toMatchObject({ type: "compacted", trigger: "summarize" });
    expect(parse("session.execution.succeeded")).toContainEqual(expect.objectContaining({ type: "idle" }));
  });

  test("the check sees a drift: `callID` where 2.0.15 sends `id`", () => {
    const real = capture("event.session.tool.success") as { data: Record<string, unknown> };
    const { id, ...rest } = real.data;
    const drifted = { ...real, data: { ...rest, callID: id } };
    expect(shapeDrift(drifted, real)).toEqual(["data.callID: the double sends it, the real host does not", "data.id: 2.0.15 sends it, the double does not"]);
  });
});
