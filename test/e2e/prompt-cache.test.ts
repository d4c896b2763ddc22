import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cacheFigures } from "../../scripts/bench/prompt-cache.ts";
import {
  auditEvents,
  conversation,
  createTestProject,
  e2eModel,
  lastOf,
  type ModelRequest,
  type Reply,
  type ScriptedModel,
  serveOpencode,
  statusNote,
  type TestProject,
  textOf,
} from "../harness/index.ts";

/**
 * Issue 16: the prompt cache survives governance. One real `opencode serve` per run, the same script with and without
 * the plugin: a root session writes todos, reads, delegates to a subagent that writes todos too, is compacted, and
 * goes on in a second turn. Every model request is compared with the previous request of the same session: within a
 * turn the system prompt and the tool list never change (byte for byte). The run without the plugin is the control.
 */

const PREFIX = "## Governance Context (opencode-governance)";
const REMINDER = "## Post-Compaction Context Recovery (opencode-governance)";

const todos = (done: number, total: number) => ({
  todos: Array.from({ length: total }, (_, i) => ({
    id: String(i + 1),
    content: `step ${i + 1}`,
    status: i < done ? "completed" : "pending",
    priority: "medium",
  })),
});
const read = { name: "read", args: { filePath: "README.md" } };
const task = { name: "task", args: { subagent_type: "cache-worker", description: "read it", prompt: "CACHE-CHILD read the readme" } };

/** OpenCode denies `todowrite` to a subagent unless its agent allows it: this one does. */
const WORKER = `---
description: A worker that keeps its own todo list.
mode: subagent
permission:
  todowrite: allow
---
You are a worker. Keep a todo list.
`;

/** Tool calls of each turn, in order; the turn's marker is in its user message. */
const PLAN: Record<string, { name: string; args: Record<string, unknown> }[]> = {
  "CACHE-TURN-1": [{ name: "todowrite", args: todos(0, 3) }, read, { name: "todowrite", args: todos(1, 3) }, task, { name: "todowrite", args: todos(2, 3) }],
  "CACHE-CHILD": [{ name: "todowrite", args: todos(0, 1) }, read, { name: "todowrite", args: todos(1, 1) }],
  "CACHE-TURN-2": [read, { name: "todowrite", args: todos(3, 3) }, read],
};

/** Stateless: the turn is the last user message, the step is the number of tool results after it. */
function respond(req: ModelRequest): Reply {
  if (req.kind === "compaction") return { text: "## Objective\n- scripted summary" };
  const messages = conversation(req);
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  const user = lastOf(req, "user") ?? "";
  const done = messages.slice(lastUser + 1).filter((m) => m.role === "tool").length;
  const marker = Object.keys(PLAN).find((k) => user.includes(k));
  const call = marker ? PLAN[marker]![done] : undefined;
  if (process.env.CACHE_DEBUG) console.error(req.index, req.sessionId?.slice(-6), marker, done, call?.name);
  return call ? { toolCalls: [call] } : { text: `${marker ?? "turn"} done` };
}

type Run = { requests: ModelRequest[]; turns: { session: string; from: number; to: number }[]; root: string; child: string };

/** One scripted session in a fresh project and a fresh `opencode serve`; `plugin: "none"` is the control. */
async function play(model: ScriptedModel, plugin: "local" | "none"): Promise<Run & { project: TestProject }> {
  const project = createTestProject({
    modelUrl: model.url,
    plugin,
    files: { "README.md": "# cache\n\nA small file.\n", ".opencode/agent/cache-worker.md": WORKER },
  });
  const serve = await serveOpencode(project);
  const first = model.requests.length;
  try {
    const root = (await serve.http.createSession()).id;
    const turns: Run["turns"] = [];
    const turn = async (fn: () => Promise<unknown>) => {
      const from = model.requests.length;
      await fn();
      turns.push({ session: root, from, to: model.requests.length });
    };
    await turn(() => serve.http.prompt(root, "CACHE-TURN-1 plan, read, delegate"));
    await serve.http.summarize(root);
    await serve.http.waitIdle([root]);
    await turn(() => serve.http.prompt(root, "CACHE-TURN-2 go on"));
    const child = (await serve.http.children(root))[0]?.id ?? "";
    return { requests: model.requests.slice(first), turns: turns.map((t) => ({ ...t, from: t.from - first, to: t.to - first })), root, child, project };
  } finally {
    await serve.stop();
  }
}

/** Consecutive agent requests of one session inside one turn window (a child's whole run is inside its parent's turn). */
function pairsWithinTurns(run: Run, session: string): [ModelRequest, ModelRequest][] {
  const pairs: [ModelRequest, ModelRequest][] = [];
  for (const t of run.turns) {
    const steps = run.requests.slice(t.from, t.to).filter((r) => r.kind === "agent" && r.sessionId === session);
    for (let i = 1; i < steps.length; i++) pairs.push([steps[i - 1]!, steps[i]!]);
  }
  return pairs;
}

/** Steps whose system prompt or tool list differs from the previous step of the same session in the same turn. */
function changes(run: Run, session: string): { index: number; what: string }[] {
  return pairsWithinTurns(run, session).flatMap(([a, b]) => {
    const what = [a.system !== b.system ? "system" : "", a.tools.join() !== b.tools.join() ? "tools" : ""].filter(Boolean).join("+");
    return what ? [{ index: b.index, what }] : [];
  });
}

describe("prompt cache: the system prompt and tool list never change within a turn (issue 16)", () => {
  const model = e2eModel(respond);
  let governed: Run & { project: TestProject };
  let control: Run & { project: TestProject };

  beforeAll(async () => {
    control = await play(model, "none");
    governed = await play(model, "local");
  }, 240_000);
  afterAll(() => {
    control?.project.cleanup();
    governed?.project.cleanup();
  });

  const stepsOf = (run: Run, session: string) => run.requests.filter((r) => r.kind === "agent" && r.sessionId === session);

  test("both runs played the whole script: todos, a read, a subagent, a compaction, a second turn", () => {
    for (const run of [control, governed]) {
      expect(run.child).toMatch(/^ses_/);
      expect(stepsOf(run, run.root).length).toBe(PLAN["CACHE-TURN-1"]!.length + 1 + PLAN["CACHE-TURN-2"]!.length + 1);
      expect(stepsOf(run, run.child).length).toBe(PLAN["CACHE-CHILD"]!.length + 1);
      expect(run.requests.some((r) => r.kind === "compaction" && r.sessionId === run.root)).toBe(true);
    }
    expect(auditEvents(governed.project.governanceDir).some((e) => e.type === "plugin_started")).toBe(true);
  });

  test("prints what a provider would bill again (docs/performance.md quotes it)", () => {
    for (const [name, run] of [
      ["no plugin", control],
      ["governed", governed],
    ] as const) {
      const c = cacheFigures(run.requests);
      console.log(
        `prompt cache, ${name}: ${c.prefixChanges} of ${c.compared} requests changed system/tools; re-billed ${c.rebilledBytes} B of ${c.requestBytes} B sent (${Math.round(c.rebilledBytes / Math.max(1, c.compared))} B per request)`,
      );
    }
  });

  test("control (no plugin): OpenCode itself keeps the system prompt and tool list stable", () => {
    expect(changes(control, control.root)).toEqual([]);
    expect(changes(control, control.child)).toEqual([]);
  });

  test("governed: no change within a turn, for the root and for the subagent", () => {
    expect(pairsWithinTurns(governed, governed.root).length).toBeGreaterThanOrEqual(8);
    expect(changes(governed, governed.root)).toEqual([]);
    expect(changes(governed, governed.child)).toEqual([]);
  });

  test("governed: across the compaction the root's system prompt stays the same (nothing it says changed)", () => {
    const systems = new Set(stepsOf(governed, governed.root).map((r) => r.system));
    expect(systems.size).toBe(1);
    expect([...systems][0]).toContain(PREFIX);
  });

  test("the governance text still reaches the model: the prefix in the system prompt, todos and the reminder in the status note", () => {
    const root = stepsOf(governed, governed.root);
    for (const r of [...root, ...stepsOf(governed, governed.child)]) expect(r.system).toContain(PREFIX);
    // After the first todowrite the count is there, and it follows the list. The plugin learns the list from
    // OpenCode's `todo.updated` event, which on a loaded machine is sometimes handled just after the next request
    // (seen twice in full runs): then the step after carries it.
    const carries = (i: number, text: string) => [root[i], root[i + 1]].some((r) => r !== undefined && (statusNote(r) ?? "").includes(text));
    expect(carries(1, "**Todos:** 3 open of 3."), "3 open of 3 by the 2nd or 3rd step").toBe(true);
    expect(carries(3, "**Todos:** 2 open of 3."), "2 open of 3 by the 4th or 5th step").toBe(true);
    // The first step after the compaction carries the reminder.
    const compaction = governed.requests.find((r) => r.kind === "compaction" && r.sessionId === governed.root)!;
    const afterCompaction = root.find((r) => r.index > compaction.index)!;
    expect(statusNote(afterCompaction)).toContain(REMINDER);
    // The child's own todos reach the child.
    const child = stepsOf(governed, governed.child);
    expect(
      [child[1], child[2]].some((r) => r !== undefined && (statusNote(r) ?? "").includes("**Todos:** 1 open of 1.")),
      "the child's count",
    ).toBe(true);
  });

  test("governed: each request repeats the previous one up to its status note (the conversation only grows)", () => {
    const serialize = (r: ModelRequest) => conversation(r).map((m) => `${m.role}:${textOf(m.content)}:${JSON.stringify(m.tool_calls ?? "")}`);
    for (const session of [governed.root, governed.child]) {
      for (const [a, b] of pairsWithinTurns(governed, session)) {
        const before = serialize(a);
        expect(serialize(b).slice(0, before.length)).toEqual(before);
      }
    }
  });
});
