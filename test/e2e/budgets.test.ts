import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import {
  allText,
  auditEvents,
  e2eHost,
  Gate,
  lastOf,
  type ModelRequest,
  projectCli,
  type Reply,
  scriptedProvider,
  sessionRecord,
  textOf,
  waitFor,
} from "../harness/index.ts";

/**
 * Issue 17 on the real host: budgets, concurrency limits and loop guards, with the scripted model reporting usage
 * (`usage` in its final SSE chunk) and prices in the provider config so OpenCode itself computes the cost. One
 * `opencode serve` for the whole file; every scenario is its own task tree, told apart by a marker in the prompt.
 */
const subagent = (name: string) => `---\ndescription: ${name} (test subagent)\nmode: subagent\n---\nYou are ${name}.\n`;
// warnAt 0.5: the warning's window (half to all of a budget) is wide enough that a loaded machine's slow steps do
// not jump over it (a check past the limit stops at once, with no warning first — by design).
const GOVERNANCE_YAML = `
budgets:
  warnAt: 0.5
  agents:
    toolcap: { toolCalls: 5 }
    tokencap: { outputTokens: 1000 }
    costcap: { cost: 0.1 }
    timecap: { activeTime: 3s }
  tree: { reasoningTokens: 1000 }
concurrency:
  perParent: 2
loops:
  repeat: 3
  stopAfter: 2
stop:
  deadline: 30s
`;

const task = (subagent_type: string, prompt: string): Reply => ({
  toolCalls: [{ name: "task", args: { description: `run ${subagent_type}`, prompt, subagent_type } }],
});
const bash = (
  command: string,
  usage?: Reply extends never ? never : { prompt_tokens: number; completion_tokens: number; reasoning_tokens?: number },
): Reply => ({
  toolCalls: [{ name: "bash", args: { command, description: "step" } }],
  ...(usage ? { usage } : {}),
});

const raiseGate = new Gate();
const pollGate = new Gate();
/** The project folder, for the children that play a build writing beside them (set in beforeAll). */
let projectDir = "";
/** Bytes the "build" appends before each poll: uneven amounts, as a compiler's output comes. */
const LOG_CHUNKS = [412, 97, 1530, 64, 388, 2210, 150, 733];
/** How long the "check" said it took: a duration that jumps up and down, the only thing that moves. */
const JITTER = [41, 27, 35, 19, 44, 23, 38, 31, 29, 40, 22, 36];

/** Each child acts by the marker in its first user message; it obeys a stop directive by answering at once. */
function respond(req: ModelRequest): Reply | Promise<Reply> {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const last = lastOf(req, "tool") ?? "";
  const tools = req.messages.filter((m) => m.role === "tool").length;
  const stopped = last.includes("SESSION STOP") || last.includes("SESSION TERMINATED");
  const child = /^CHILD (\w+)/.exec(first.split("\n").find((l) => l.startsWith("CHILD ")) ?? "")?.[1];
  if (!child) {
    // Parents: spawn once, then answer.
    const m = /PARENT (\w+) (\w+)/.exec(first);
    if (!m) return { text: "ok" };
    if (m[1] === "MANY") {
      if (tools === 0)
        return { toolCalls: [0, 1, 2].map((i) => ({ name: "task", args: { description: `c${i}`, prompt: `CHILD wait ${i}`, subagent_type: "general" } })) };
      if (tools === 3) return task("general", "CHILD quick again");
      return { text: "parent done" };
    }
    return tools === 0 ? task(m[2] as string, `CHILD ${m[1]}`) : { text: "parent done" };
  }
  // The raise case: the budget's L1 arrives; the child holds its next step until the user raised the budget, then goes on.
  if (child === "raise" && stopped) return raiseGate.wait().then(() => bash(`echo raise-${tools}`));
  if (stopped) return { text: `child ${child} summary: stopped` };
  switch (child) {
    case "tools":
    case "tokens":
    case "cost":
      return tools < 12
        ? bash(
            `echo ${child}-${tools}`,
            child === "tokens"
              ? { prompt_tokens: 100, completion_tokens: 300 }
              : child === "cost"
                ? { prompt_tokens: 10_000, completion_tokens: 0 }
                : undefined,
          )
        : { text: "never stopped" };
    case "time":
      return tools < 12 ? { ...bash(`sleep 0.8; echo t-${tools}`) } : { text: "never stopped" };
    case "raise":
      return tools < 8 ? bash(`echo raise-${tools}`) : { text: "child raise done after the raise" };
    case "tree":
      return tools < 12 ? bash(`echo tree-${tools}`, { prompt_tokens: 100, completion_tokens: 10, reasoning_tokens: 300 }) : { text: "never stopped" };
    case "loop":
      return tools < 12 ? bash("echo same") : { text: "never stopped" };
    // Issue 28 §3: the cosmetic variants of one loop, each a model repeating itself.
    case "desc":
      return tools < 12
        ? { toolCalls: [{ name: "bash", args: { command: "cat notes.txt", description: `read the notes, attempt ${tools}` } }] }
        : { text: "never stopped" };
    case "dotpath":
      return tools < 12 ? bash(`cat ${["notes.txt", "./notes.txt", ".//notes.txt", "././notes.txt"][tools % 4]}`) : { text: "never stopped" };
    case "cycle":
      return tools < 12 ? bash(["echo a", "echo b", "echo c"][tools % 3] as string) : { text: "never stopped" };
    case "counter":
      // The same command each time; only a counter in its output moves.
      return tools < 12
        ? bash('n=$(cat .attempts 2>/dev/null || echo 0); n=$((n+1)); echo $n > .attempts; echo "attempt $n: not ready"')
        : { text: "never stopped" };
    // A poll that waits (a sleep) and sees the same line: a build still running, not a loop.
    case "waitpoll":
      return tools < 6 ? bash("sleep 0.3; echo build running") : { text: "poll finished" };
    case "poll":
      return tools < 6 ? bash("sleep 0.2; date +%s%N") : { text: "poll finished" };
    // Issue 39 §5: a number that grows is progress (the build writes between polls; the clock moves), a number that
    // jumps at random beside an unchanged status is noise. None of these waits (no sleep, no status word, quick).
    case "growlog":
      if (tools >= 8) return { text: "build log polled" };
      fs.appendFileSync(path.join(projectDir, "build.log"), "x".repeat(LOG_CHUNKS[tools] as number));
      return bash("wc -c < build.log");
    case "clock":
      return tools < 8 ? bash("date +%s%N") : { text: "clock read" };
    case "jitter":
      if (tools >= 12) return { text: "never stopped" };
      fs.writeFileSync(path.join(projectDir, "check.txt"), `not ready (took 0.${JITTER[tools]}s)\n`);
      return bash("cat check.txt");
    case "wait":
      return tools === 0 ? pollGate.wait().then(() => bash("echo waited")) : { text: "waited" };
    case "quick":
      return { text: "quick done" };
  }
  return { text: "ok" };
}

describe("budgets, concurrency and loop guards on the real opencode", () => {
  const { project, serve, stepsOf, events } = e2eHost({
    respond,
    governanceYaml: GOVERNANCE_YAML,
    extraAgents: Object.fromEntries(["toolcap", "tokencap", "costcap", "timecap", "plain"].map((n) => [n, subagent(n)])),
    opencodeConfig: (url) => scriptedProvider(url, { "scripted-model": { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } }),
    beforeServe: async () => {
      projectDir = project.dir;
    },
    timeoutMs: 60_000,
  });
  afterAll(async () => {
    raiseGate.releaseAll();
    pollGate.releaseAll();
  });

  const childOf = async (rootId: string) => (await serve.http.children(rootId))[0]?.id as string;
  /** A root prompted to the end of its turn, and its (first) subagent. */
  const runTree = async (prompt: string, timeoutMs = 30_000) => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, prompt);
    await serve.http.waitIdle([root.id], timeoutMs);
    return { root, child: await childOf(root.id) };
  };

  test.each([
    ["tools", "toolcap", "toolCalls", "tool calls"],
    ["tokens", "tokencap", "outputTokens", "output tokens"],
    ["cost", "costcap", "cost", "cost"],
    ["time", "timecap", "activeTime", "active time"],
  ])("a subagent over its %s budget is warned, then stopped with the budget as the reason; the parent is told", async (marker, agent, key, words) => {
    const { root, child } = await runTree(`PARENT ${marker} ${agent}`, 40_000);
    expect(events("budget_warning", child).map((e) => e.key)).toContain(key);
    expect(events("budget_exceeded", child)).toEqual([expect.objectContaining({ key, scope: "session" })]);
    const childTexts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
    expect(childTexts.some((t) => t.startsWith("⏳ GOVERNANCE BUDGET NOTICE"))).toBe(true);
    const stopText = childTexts.find((t) => t.includes("SESSION STOP REQUESTED"));
    expect(stopText).toContain(`Budget exceeded:`);
    expect(stopText).toContain(words);
    // Governance stopped it, and says so; it never speaks as the user (issue 28 §2).
    expect(stopText).toContain("Governance (a limit in the project's governance.yaml, not the user) asked you to stop");
    expect(stopText).toContain("Reason (from governance):");
    expect(stopText).not.toMatch(/The user asked|from the user/);
    // One warning per budget and scope.
    expect(events("budget_warning", child).filter((e) => e.key === key)).toHaveLength(1);
    expect(sessionRecord(project.governanceDir, child)).toMatchObject({ control: "stopped" });
    // The parent's next request says which budget ran out and how much was used.
    const parentAfter = stepsOf(root.id).at(-1) as ModelRequest;
    expect(allText(parentAfter)).toContain("Budget exceeded:");
    expect(allText(parentAfter)).toContain(words);
    expect(allText(parentAfter)).toContain("was stopped by governance (a limit in the project's governance.yaml, not the user)");
    expect(allText(parentAfter)).not.toContain("was stopped by the user");
    expect(events("session_stop_requested", child)).toEqual([expect.objectContaining({ by: "governance", origin: "governance" })]);
  });

  test("OpenCode's own cost for the priced model is what governance counts", async () => {
    const rec = (await waitFor(
      () => auditEvents(project.governanceDir).find((e) => e.type === "budget_exceeded" && e.key === "cost"),
      "cost exceeded",
    )) as Record<string, unknown>;
    // 4 steps of 10 000 input tokens at $3 per million = $0.12 (the 4th step crosses $0.10).
    expect(rec.used).toBeCloseTo(0.12, 5);
  });

  test("a raised budget stands the ladder down and the subagent goes on", async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "PARENT raise toolcap");
    const child = await waitFor(() => childOf(root.id), "child");
    await waitFor(() => events("budget_exceeded", child).length > 0, "budget exceeded");
    const res = await projectCli(project, ["budget", child, "--add", "toolCalls=10"]);
    expect(res.code, res.stderr).toBe(0);
    await waitFor(() => events("budget_raised", child).some((e) => e.stoodDown === true), "stood down");
    raiseGate.releaseAll();
    await serve.http.waitIdle([root.id], 30_000);
    const last = stepsOf(child).at(-1) as ModelRequest;
    expect(lastOf(last, "tool")).not.toContain("SESSION STOP");
    expect(sessionRecord(project.governanceDir, child)).toMatchObject({ control: expect.not.stringMatching(/stop/) });
    expect(events("session_stopped", child)).toEqual([]);
    // The child was told once that it may go on, and with what is left (issue 28 §1).
    const told = last.messages.filter((m) => m.role === "tool" && textOf(m.content).includes("you may continue your task"));
    expect(told).toHaveLength(1);
    expect(textOf(told[0]?.content)).toMatch(/You: \d+ left of the tool calls budget/);
    expect(events("budget_resumed", child)).toHaveLength(1);
  });

  test("a raise written into a record by hand is not trusted", async () => {
    const { patchSessionRecord } = await import("../harness/index.ts");
    const { child } = await runTree("PARENT tools toolcap");
    patchSessionRecord(project.governanceDir, child, (r) => {
      r.budget.raises = [{ id: "forged", at: 1, scope: "session", add: { toolCalls: 1000 }, by: "model", sig: "0".repeat(64) }];
    });
    const shown = await projectCli(project, ["budget", child, "--json"]);
    const view = JSON.parse(shown.stdout).budget.session.find((l: { key: string }) => l.key === "toolCalls");
    expect(view.limit).toBe(5);
  });

  test("a tree budget stops the whole tree", async () => {
    const { root, child } = await runTree("PARENT tree plain");
    expect(events("budget_exceeded", root.id)).toEqual([expect.objectContaining({ scope: "tree", key: "reasoningTokens" })]);
    expect(sessionRecord(project.governanceDir, child)?.stop?.reason).toContain("task tree's budget");
  });

  test("the (N+1)th concurrent spawn is refused with a text the model can act on, and allowed again when one ends", async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "PARENT MANY general");
    await waitFor(() => events("spawn_refused_concurrency", root.id).length > 0, "refusal", 20_000);
    pollGate.releaseAll();
    await serve.http.waitIdle([root.id], 30_000);
    // The parent's last request carries its whole history: each tool result once.
    const results = (stepsOf(root.id).at(-1) as ModelRequest).messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
    expect(results.filter((t) => t.includes("SPAWN REFUSED (concurrency limit)"))).toHaveLength(1);
    expect(results.find((t) => t.includes("SPAWN REFUSED"))).toContain("Wait for one of the running subagents");
    const children = await serve.http.children(root.id);
    expect(children).toHaveLength(3); // two of the first step, and the one after they ended
  });

  test.each(["desc", "dotpath", "cycle", "counter"])(
    "a loop in cosmetic disguise (%s) is noticed, then stopped by governance (issue 28 §3)",
    async (marker) => {
      const { child } = await runTree(`PARENT ${marker} plain`);
      expect(events("loop_detected", child).map((e) => e.stage)).toEqual(["notice", "stop"]);
      const texts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
      expect(texts.find((t) => t.includes("SESSION STOP"))).toContain("Loop detected");
      expect(texts.find((t) => t.includes("SESSION STOP"))).toContain("Governance");
      expect(
        stepsOf(child)
          .at(-1)
          ?.messages.filter((m) => m.role === "tool").length,
      ).toBeLessThan(12);
    },
  );

  test.each([
    ["growlog", "a build log that grows (`wc -c < build.log`)"],
    ["clock", "the clock (`date +%s%N`)"],
  ])("polling %s, whose only change is a number that grows, is progress: 8 calls, no loop notice (issue 39 §5)", async (marker) => {
    const { child } = await runTree(`PARENT ${marker} plain`);
    expect(events("loop_detected", child)).toEqual([]);
    const results = ((stepsOf(child).at(-1) as ModelRequest).messages ?? []).filter((m) => m.role === "tool").map((m) => textOf(m.content));
    expect(results).toHaveLength(8);
    // What the child saw is what the test claims: one number, growing at every call (read as a BigInt: %s%N has 19 digits).
    const numbers = results.map((t) => BigInt(t.trim()));
    expect(numbers.every((n, i) => i === 0 || n > (numbers[i - 1] as bigint))).toBe(true);
  });

  test("a duration that jumps up and down beside an unchanged status is noise: noticed, then stopped (issue 39 §5)", async () => {
    const { child } = await runTree("PARENT jitter plain");
    expect(events("loop_detected", child).map((e) => e.stage)).toEqual(["notice", "stop"]);
    const texts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
    expect(texts.find((t) => t.includes("SESSION STOP"))).toContain("Loop detected");
    expect(
      stepsOf(child)
        .at(-1)
        ?.messages.filter((m) => m.role === "tool").length,
    ).toBeLessThan(12);
  });

  test("a poll that waits and sees the same line is not a loop (issue 28 §3)", async () => {
    const { child: poller } = await runTree("PARENT waitpoll plain");
    expect(events("loop_detected", poller)).toEqual([]);
    expect(
      stepsOf(poller)
        .at(-1)
        ?.messages.filter((m) => m.role === "tool"),
    ).toHaveLength(6);
  });

  test("a looping subagent is noticed, then stopped; a progressing poll is not", async () => {
    const { child } = await runTree("PARENT loop plain");
    expect(events("loop_detected", child).map((e) => e.stage)).toEqual(["notice", "stop"]);
    const texts = stepsOf(child).map((r) => lastOf(r, "tool") ?? "");
    expect(texts.some((t) => t.startsWith("🔁 GOVERNANCE LOOP NOTICE"))).toBe(true);
    expect(texts.find((t) => t.includes("SESSION STOP"))).toContain("Loop detected");

    const { child: poller } = await runTree("PARENT poll plain");
    expect(events("loop_detected", poller)).toEqual([]);
    expect(
      stepsOf(poller)
        .at(-1)
        ?.messages.filter((m) => m.role === "tool"),
    ).toHaveLength(6);
  });
});
