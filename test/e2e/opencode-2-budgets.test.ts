/**
 * The scenario table's budget rows on the real OpenCode 2.0.15 (issue 40): token and cost budgets counted from what
 * 2.0.15 itself reports (`session.usage.updated`: the session's totals, its cost computed from the model's prices in
 * the config), the `budget` CLI showing a child and raising its budget (`--add`), the loop guard, the concurrency
 * limit, and a crash (kill -9) in the middle of a stop followed by a new `opencode serve`. One `opencode serve` for
 * every case but the crash's restart; each case is its own task tree, told apart by a marker in its prompt.
 * The same rows on OpenCode 1.18: budgets, budgets-exact, crash-mid-stop.
 */
import { afterAll, describe, expect, test } from "vitest";
import {
  allText,
  e2eHost2,
  Gate,
  lastOf,
  locksLeft,
  MODEL_ID,
  type ModelRequest,
  onOpencode2,
  type Reply,
  sessionRecord,
  statusNote,
  textOf,
  waitFor,
} from "../harness/index.ts";

const subagentMd = (name: string, model?: string) =>
  `---\ndescription: ${name} (test subagent)\nmode: subagent\n${model ? `model: ${model}\n` : ""}---\nYou are ${name}.\n`;
const GOVERNANCE_YAML = `
budgets:
  warnAt: 0.5
  agents:
    tokencap: { outputTokens: 1000 }
    costcap: { cost: 0.1 }
    raisecap: { toolCalls: 3 }
    freecap: { cost: 0.5 }
concurrency:
  perParent: 2
loops:
  repeat: 3
  stopAfter: 2
stop:
  deadline: 30s
`;
/** The prices 2.0.15 reads from a model's config (`Config.Model.Cost`: USD per million tokens). */
const PRICES = { input: 3, output: 15 };

const subagentCall = (agent: string, prompt: string) => ({ name: "subagent", args: { agent, description: `hand over to ${agent}`, prompt } });
const subagent = (agent: string, prompt: string): Reply => ({ toolCalls: [subagentCall(agent, prompt)] });
const shell = (command: string, usage?: { prompt_tokens: number; completion_tokens: number }): Reply => ({
  toolCalls: [{ name: "shell", args: { command, description: "step" } }],
  ...(usage ? { usage } : {}),
});

const raiseGate = new Gate();
const waitGate = new Gate();

function respond(req: ModelRequest): Reply | Promise<Reply> {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const last = lastOf(req, "tool") ?? "";
  const stopped = last.includes("SESSION STOP") || last.includes("SESSION TERMINATED");
  const child = /\bCHILD (\w+)/.exec(first)?.[1];
  if (lastOf(req, "user")?.includes("CRASH-RESUME")) return { text: "resumed" };
  if (!child) {
    const parent = /\bPARENT (\w+) (\w+)/.exec(first);
    if (!parent) return { text: "ok" };
    if (parent[1] === "MANY") {
      // Three spawns in one step against a limit of two; once they are back, one more (allowed again).
      if (tools === 0) return { toolCalls: [0, 1, 2].map((i) => subagentCall("plain", `CHILD wait ${i}`)) };
      if (tools === 3) return subagent("plain", "CHILD quick");
      return { text: "parent done" };
    }
    return tools === 0 ? subagent(parent[2]!, `CHILD ${parent[1]}`) : { text: "parent done" };
  }
  // The raise case: the budget's L1 arrives; the child holds its next step until the user raised the budget.
  if (child === "raise" && stopped) return raiseGate.wait().then(() => shell(`echo raise-${tools}`));
  if (stopped) return { text: `child ${child} stopped` };
  switch (child) {
    case "tokens":
      return tools < 12 ? shell(`echo tokens-${tools}`, { prompt_tokens: 100, completion_tokens: 300 }) : { text: "never stopped" };
    case "cost":
      return tools < 12 ? shell(`echo cost-${tools}`, { prompt_tokens: 10_000, completion_tokens: 0 }) : { text: "never stopped" };
    case "free":
      return tools < 3 ? shell(`echo free-${tools}`, { prompt_tokens: 10_000, completion_tokens: 100 }) : { text: "child free done" };
    case "fail":
      return { httpError: 400, message: "scripted failure" };
    case "crash":
      // One call, then a model that never answers: the crash comes while the stop waits for its next call.
      return tools === 0 ? { toolCalls: [{ name: "read", args: { path: "PLAN.md" } }] } : { hang: true, silent: true };
    case "raise":
      return tools < 6 ? shell(`echo raise-${tools}`) : { text: "child raise done after the raise" };
    case "loop":
      return tools < 12 ? shell("echo same") : { text: "never stopped" };
    case "wait":
      return tools === 0 ? waitGate.wait().then(() => shell("echo waited")) : { text: "waited" };
    case "quick":
      return { text: "quick done" };
  }
  return { text: "ok" };
}

onOpencode2("OpenCode 2 budget scenarios, real host", (host) => {
  describe(`OpenCode ${host.version}, real host: token and cost budgets, the budget CLI, loop guard, concurrency, a failed child, a crash and a new server`, () => {
    const [provider, modelName] = MODEL_ID.split("/") as [string, string];
    const { model, project, serve, startServe, stepsOf, events, cli } = e2eHost2(host, {
      respond,
      governanceYaml: GOVERNANCE_YAML,
      extraAgents: {
        ...Object.fromEntries(["tokencap", "costcap", "raisecap", "plain"].map((n) => [n, subagentMd(n)])),
        freecap: subagentMd("freecap", `${provider}/unpriced-model`),
      },
      files: { "PLAN.md": "# plan\n" },
      opencodeConfig: (modelUrl) => ({
        providers: {
          [provider]: {
            package: "@opencode/ai/providers/openai-compatible",
            settings: { baseURL: modelUrl, apiKey: "scripted" },
            models: {
              [modelName]: {
                capabilities: { tools: true, input: ["text"], output: ["text"] },
                limit: { context: 200_000, output: 8_000 },
                cost: PRICES,
              },
              "unpriced-model": { capabilities: { tools: true, input: ["text"], output: ["text"] }, limit: { context: 200_000, output: 8_000 } },
            },
          },
        },
      }),
    });
    const record = (id: string) => sessionRecord(project.governanceDir, id);
    const childOf = async (root: string) => waitFor(async () => (await serve.api.children(root))[0]?.id, "the child session", 30_000);
    /** A root prompted with the marker, to the end of its turn, and its first child. */
    const runTree = async (prompt: string) => {
      const root = (await serve.api.createSession()).id;
      await serve.api.run(root, prompt, 60_000);
      return { root, child: await childOf(root) };
    };

    afterAll(() => {
      raiseGate.releaseAll();
      waitGate.releaseAll();
    });

    test.each([
      ["tokens", "tokencap", "outputTokens", "output tokens"],
      ["cost", "costcap", "cost", "cost"],
    ])("a subagent over its %s budget is warned, then stopped with the budget as the reason; the parent is told", async (marker, agent, key, words) => {
      const { root, child } = await runTree(`PARENT ${marker} ${agent}`);
      expect(events("budget_warning", child).map((e) => e.key)).toContain(key);
      expect(events("budget_exceeded", child)).toEqual([expect.objectContaining({ key, scope: "session" })]);
      const childTexts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
      expect(childTexts.some((t) => t.includes("GOVERNANCE BUDGET NOTICE"))).toBe(true);
      const stopText = childTexts.find((t) => t.includes("SESSION STOP REQUESTED"));
      expect(stopText).toContain("Budget exceeded:");
      expect(stopText).toContain(words);
      expect(stopText).toContain("Governance (a limit in the project's governance.yaml, not the user) asked you to stop");
      expect(record(child)).toMatchObject({ control: "stopped" });
      expect(allText(stepsOf(root).at(-1)!)).toContain("Budget exceeded:");
    });

    test("what governance counts is 2.0.15's own totals for the session (tokens and the cost of the priced model); `budget` shows it", async () => {
      const exceeded = events("budget_exceeded").find((e) => e.key === "cost")!;
      const child = exceeded.sessionId as string;
      // 10 000 input tokens a step at $3 per million = $0.03: the 4th step crosses $0.10.
      expect(exceeded.used).toBeCloseTo(0.12, 5);
      const own = (await serve.api.getSession(child)) as unknown as { cost?: number; tokens?: { input: number; output: number } };
      const r = record(child)!;
      expect(r.budget.cost).toBeCloseTo(own.cost ?? Number.NaN, 9);
      expect(r.budget.tokens.input).toBe(own.tokens?.input);
      const shown = await cli("budget", child, "--json");
      expect(shown.code, shown.stderr).toBe(0);
      const line = JSON.parse(shown.stdout).budget.session.find((l: { key: string }) => l.key === "cost");
      expect(line).toMatchObject({ limit: 0.1 });
      expect(line.used).toBeCloseTo(own.cost!, 9);
    });

    test("`budget --add` raises a stopped child's budget: the ladder stands down, the child is told what is left and goes on", async () => {
      const root = (await serve.api.createSession()).id;
      const since = Date.now() - 5;
      await serve.api.prompt(root, "PARENT raise raisecap");
      const child = await childOf(root);
      await waitFor(() => events("budget_exceeded", child).length > 0, "budget exceeded", 30_000);
      const res = await cli("budget", child, "--add", "toolCalls=10");
      expect(res.code, res.stderr).toBe(0);
      await waitFor(() => events("budget_raised", child).some((e) => e.stoodDown === true), "stood down");
      raiseGate.releaseAll();
      await serve.api.waitIdle(root, since, 60_000);
      const last = stepsOf(child).at(-1)!;
      expect(lastOf(last, "tool")).not.toContain("SESSION STOP");
      expect(record(child)).toMatchObject({ control: expect.not.stringMatching(/stop/) });
      expect(events("session_stopped", child)).toEqual([]);
      const told = last.messages.filter((m) => m.role === "tool" && textOf(m.content).includes("you may continue your task"));
      expect(told).toHaveLength(1);
      expect(textOf(told[0]?.content)).toMatch(/You: \d+ left of the tool calls budget/);
      const shown = JSON.parse((await cli("budget", child, "--json")).stdout);
      expect(shown.budget.session.find((l: { key: string }) => l.key === "toolCalls")).toMatchObject({ limit: 13 });
    });

    test("a looping subagent (the same `shell` call, the same result) is noticed, then stopped by governance", async () => {
      const { child } = await runTree("PARENT loop plain");
      expect(events("loop_detected", child).map((e) => e.stage)).toEqual(["notice", "stop"]);
      const texts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
      expect(texts.some((t) => t.includes("GOVERNANCE LOOP NOTICE"))).toBe(true);
      expect(texts.find((t) => t.includes("SESSION STOP"))).toContain("Loop detected");
      expect(
        stepsOf(child)
          .at(-1)!
          .messages.filter((m) => m.role === "tool").length,
      ).toBeLessThan(12);
    });

    test("the third of three `subagent` calls in one step is refused by the concurrency limit (2), with a text the model can act on; allowed again once they end", async () => {
      const root = (await serve.api.createSession()).id;
      const since = Date.now() - 5;
      await serve.api.prompt(root, "PARENT MANY plain");
      await waitFor(() => events("spawn_refused_concurrency", root).length > 0, "the refusal", 30_000);
      waitGate.releaseAll();
      await serve.api.waitIdle(root, since, 60_000);
      const results = stepsOf(root)
        .at(-1)!
        .messages.filter((m) => m.role === "tool")
        .map((m) => textOf(m.content));
      expect(results.filter((t) => t.includes("SPAWN REFUSED (concurrency limit)"))).toHaveLength(1);
      expect(results.find((t) => t.includes("SPAWN REFUSED"))).toContain("Wait for one of the running subagents");
      expect(await serve.api.children(root)).toHaveLength(3);
    });

    test("a cost budget on a model without prices (2.0.15 reports cost 0 however many tokens) is said once: audit, host notice, status", async () => {
      const { child } = await runTree("PARENT free freecap");
      const r = record(child)!;
      expect(r.budget.tokens.input).toBeGreaterThanOrEqual(30_000);
      expect(r.budget.cost).toBe(0);
      expect(r.budget.costReported).toBe(false);
      expect(events("budget_cost_unreported", child)).toEqual([expect.objectContaining({ scope: "session", limit: 0.5, agent: "freecap" })]);
      expect(events("budget_exceeded", child)).toEqual([]);
      // OpenCode 2 has no toasts for server plugins: the notice is an audit line `doctor` and the dashboard show.
      expect(events("host_notice").filter((e) => String(e.message).includes("cost budget of freecap cannot work"))).toHaveLength(1);
      const status = await cli("status");
      expect(status.stdout).toContain(`${child} freecap: the cost budget cannot work: the provider reports no prices`);
    });

    test("a child whose model fails ends `failed`, its parent's link `failed`, and is no longer listed as running", async () => {
      const { root, child } = await runTree("PARENT fail plain");
      await waitFor(() => record(child)?.end, "the child ended", 10_000);
      expect({ control: record(child)!.control, how: record(child)!.end.how }).toEqual({ control: "completed", how: "failed" });
      await waitFor(() => record(root)?.children.find((c: { sessionId: string }) => c.sessionId === child)?.outcome === "failed", "link failed", 10_000);
      const listed = JSON.parse((await cli("sessions", "--json")).stdout) as { sessions: { sessionId: string; running: boolean }[] };
      expect(listed.sessions.filter((s) => s.running).map((s) => s.sessionId)).not.toContain(child);
      expect(events("session_ended", child)).toEqual([expect.objectContaining({ how: "failed" })]);
    });

    test("a crash (kill -9) in the middle of a stop: a new `opencode serve` ends it `orphaned`, the root is resumable as cut off by a crash", async () => {
      const root = (await serve.api.createSession()).id;
      await serve.api.prompt(root, "PARENT crash plain");
      const child = await childOf(root);
      await waitFor(() => record(child)?.lastToolCall?.tool === "read", "the child's read", 30_000);
      expect((await cli("stop", child, "--reason", "crash test")).code).toBe(0);
      await waitFor(() => record(child)?.control === "stopping", "the plugin took the stop", 30_000);
      const pid = record(child)!.hostedBy.pid as number;
      await serve.crash();
      const again = await cli("stop", child);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`its OpenCode process ${pid} is gone`);

      // The user comes back to the root. 2.0.15 restarted after a kill -9 loads a location's plugins on the first
      // prompt there (a session created without one did not, in 100 s): the new process's start sweep and the
      // resume are both that prompt's.
      await startServe();
      const from = model.requests.length;
      await serve.api.run(root, "CRASH-RESUME where were we?");
      const step = model.requests.slice(from).find((q) => q.kind === "agent" && q.sessionId === root)!;
      expect(statusNote(step)).toContain("## Resumed Session (opencode-governance)");
      expect(events("session_resumed", root)).toContainEqual(expect.objectContaining({ cutOffByCrash: true }));
      await waitFor(() => record(child)?.control === "orphaned", "child ended orphaned", 30_000);
      expect(record(child)!.end).toMatchObject({ how: "orphaned", detail: `host process ${pid} ended` });
      expect(record(root)!.children[0]).toMatchObject({ outcome: "orphaned" });
      expect((await cli("sessions")).stdout).not.toContain(child);
      expect(events("session_stopped", child)).toEqual([]);
      await waitFor(() => locksLeft(project.governanceDir).length === 0, "the dead process's locks swept", 20_000);
    });
  });
});
