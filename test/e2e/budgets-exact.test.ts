import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  auditEvents,
  type BusEvent,
  e2eHost,
  listen,
  type ModelRequest,
  projectCli,
  type Reply,
  scriptedProvider,
  sessionRecord,
  textOf,
  waitFor,
} from "../harness/index.ts";

/**
 * Issue 28 §1 on the real host: budgets exact. One `opencode serve`, one provider with two models — `scripted-model`
 * priced (OpenCode computes each step's cost from the usage the scripted model reports) and `unpriced-model` with no
 * prices (cost 0 however many tokens) — and a subagent per case:
 * - `costcap` ($0.10, priced): stopped by its budget, then ends by abort right after a step's cost was reported.
 *   OpenCode 1.18 reports that step's cost on its `message.updated` and sends no `session.updated` after it (its
 *   loop ends), so totals taken from `session.updated` alone stay one step short of OpenCode's own (3 of 9 runs
 *   before the fix, when governance's own hard stop happened to land there). The test sends the abort inside that
 *   window, on the event stream, so the case is hit every run instead of by chance.
 * - `freecap` (a cost budget on the unpriced model): tokens grow, cost stays 0, the budget cannot fire; said once.
 * - `pennycap` ($0.001, priced): exceeded at the first step; `status` prints the limit as `$0.001`, not `$0.00`.
 */
const subagent = (name: string, model?: string) =>
  `---\ndescription: ${name} (test subagent)\nmode: subagent\n${model ? `model: ${model}\n` : ""}---\nYou are ${name}.\n`;
const GOVERNANCE_YAML = `
budgets:
  agents:
    costcap: { cost: 0.1 }
    freecap: { cost: 0.5 }
    pennycap: { cost: 0.001 }
stop:
  deadline: 30s
`;
/** 10 000 input and 100 output tokens a step: $0.0315 at $3 / $15 per million. */
const USAGE = { prompt_tokens: 10_000, completion_tokens: 100 };

/** Parents spawn the subagent their prompt names; `stubborn` ignores stops, the others obey. */
function respond(req: ModelRequest): Reply {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool");
  const parent = /^PARENT (\w+) (\w+)/.exec(first);
  if (parent)
    return tools.length === 0
      ? { toolCalls: [{ name: "task", args: { description: `run ${parent[2]}`, prompt: `CHILD ${parent[1]}`, subagent_type: parent[2] } }] }
      : { text: "parent done" };
  const child = /CHILD (\w+)/.exec(first)?.[1];
  const stopped = tools.some((m) => textOf(m.content).includes("SESSION STOP"));
  const step = (): Reply => ({ toolCalls: [{ name: "bash", args: { command: `sleep 0.2; echo step-${tools.length}`, description: "step" } }], usage: USAGE });
  if (child === "stubborn") return tools.length < 30 ? step() : { text: "gave up" };
  if (stopped) return { text: `child ${child} stopped`, usage: USAGE };
  if (child === "free" || child === "penny") return tools.length < 5 ? step() : { text: `child ${child} done`, usage: USAGE };
  return { text: "ok" };
}

type Tokens = { input: number; output: number; reasoning: number; cache: { read: number; write: number } };
type AssistantInfo = { id: string; role: string; cost?: number; tokens?: Tokens; time?: { completed?: number } };

describe("budgets exact on the real opencode (issue 28 §1)", () => {
  const { project, serve, events } = e2eHost({
    respond,
    governanceYaml: GOVERNANCE_YAML,
    extraAgents: {
      costcap: subagent("costcap"),
      pennycap: subagent("pennycap"),
      freecap: subagent("freecap", "scripted/unpriced-model"),
    },
    opencodeConfig: (url) => scriptedProvider(url, { "scripted-model": { input: 3, output: 15 }, "unpriced-model": undefined }),
    timeoutMs: 60_000,
  });
  let bus: ReturnType<typeof listen>;
  /** The child whose next reported step cost triggers the abort, and the message that was aborted. */
  let armed: { child: string; aborted?: string } | null = null;

  const onEvent = (e: BusEvent) => {
    if (!armed || armed.aborted || e.type !== "message.updated") return;
    const info = e.properties?.info as (AssistantInfo & { sessionID?: string }) | undefined;
    if (!info || info.sessionID !== armed.child || info.role !== "assistant") return;
    if (!auditEvents(project.governanceDir).some((a) => a.type === "budget_exceeded" && a.sessionId === armed?.child)) return;
    // A step's cost on its message, the message not yet completed: OpenCode's loop has not sent the session's totals.
    if ((info.cost ?? 0) > 0 && !info.time?.completed) {
      armed.aborted = info.id;
      void serve.http.abort(armed.child).catch(() => undefined);
    }
  };

  beforeAll(() => {
    bus = listen(serve.url, project.dir, onEvent);
  });
  afterAll(() => bus?.close());

  const childOf = async (rootId: string) => (await serve.http.children(rootId))[0]?.id as string;
  /** OpenCode's own totals of a session: its assistant messages' cost and tokens, summed. */
  const opencodeTotals = async (id: string) => {
    const infos = (await serve.http.messages(id)).map((m) => m.info as AssistantInfo).filter((i) => i.role === "assistant");
    const sum = (f: (t: Tokens) => number) => infos.reduce((n, i) => n + (i.tokens ? f(i.tokens) : 0), 0);
    return {
      cost: infos.reduce((n, i) => n + (i.cost ?? 0), 0),
      tokens: {
        input: sum((t) => t.input),
        output: sum((t) => t.output),
        reasoning: sum((t) => t.reasoning),
        cacheRead: sum((t) => t.cache.read),
        cacheWrite: sum((t) => t.cache.write),
      },
      infos,
    };
  };

  /**
   * A stubborn `costcap` child runs until its budget is exceeded (the stop ladder starts); at the first step cost
   * reported after that, the test aborts it. `hit`: the case under test happened — the aborted step's cost is on its
   * message and OpenCode sent no session totals after it (on a loaded machine the abort can land after them).
   */
  const stopThenAbort = async () => {
    const root = await serve.http.createSession();
    await serve.http.promptAsync(root.id, "PARENT stubborn costcap");
    const child = await waitFor(() => childOf(root.id), "the child");
    armed = { child };
    const aborted = await waitFor(() => armed?.aborted, "a step's cost reported after the budget stop, and the abort sent", 90_000);
    await serve.http.waitIdle([root.id, child], 60_000);
    // Where the abort lands decides how OpenCode ends the turn (a MessageAbortedError, or a loop that just stops).
    const own = await waitFor(async () => {
      const t = await opencodeTotals(child);
      return t.infos.every((i) => i.time?.completed) ? t : undefined;
    }, "every message of the aborted child completed");
    const at = bus.events.findIndex((e) => e.type === "message.updated" && (e.properties?.info as AssistantInfo | undefined)?.id === aborted);
    const totalsAfter = bus.events
      .slice(at)
      .filter((e) => e.type === "session.updated" && (e.properties?.info as { id?: string } | undefined)?.id === child)
      .map((e) => (e.properties?.info as { cost?: number } | undefined)?.cost ?? 0);
    const hit = (own.infos.find((i) => i.id === aborted)?.cost ?? 0) > 0 && totalsAfter.every((c) => c < own.cost);
    if (!hit) console.log(`the abort missed the window: OpenCode's session totals after the aborted step: ${totalsAfter.join(", ")}`);
    return { child, own, hit };
  };

  test("a budget-stopped subagent that ends by abort keeps totals equal to OpenCode's own", async () => {
    let run = await stopThenAbort();
    for (let tries = 1; !run.hit && tries < 3; tries++) run = await stopThenAbort();
    expect(run.hit, "the abort landed after OpenCode's session totals in 3 tries: the case was not exercised").toBe(true);
    const { child, own } = run;
    expect(events("budget_exceeded", child)).toEqual([expect.objectContaining({ key: "cost", scope: "session" })]);

    // Governance's totals equal OpenCode's own, to the token and the cent (and below).
    const record = await waitFor(
      () => {
        const r = sessionRecord(project.governanceDir, child);
        return r && Math.abs(r.budget.cost - own.cost) < 1e-9 ? r : undefined;
      },
      "the record's totals",
      5_000,
    ).catch(() => sessionRecord(project.governanceDir, child));
    expect(record?.budget.tokens).toEqual(own.tokens);
    expect(record?.budget.cost).toBeCloseTo(own.cost, 9);
    expect(own.tokens.input).toBe(10_000 * own.infos.filter((i) => (i.cost ?? 0) > 0).length);
    // The user reads the same figure.
    const shown = JSON.parse((await projectCli(project, ["budget", child, "--json"])).stdout);
    expect(shown.budget.session.find((l: { key: string }) => l.key === "cost").used).toBeCloseTo(own.cost, 9);
  }, 300_000);

  test("a cost budget on a provider without prices is said once: audit, toast, status and doctor", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "PARENT free freecap");
    await serve.http.waitIdle([root.id], 60_000);
    const child = await childOf(root.id);
    const own = await opencodeTotals(child);
    expect(own.cost).toBe(0);
    expect(own.tokens.input).toBeGreaterThanOrEqual(50_000);

    // Once, though every step used more tokens at cost 0.
    expect(events("budget_cost_unreported", child)).toEqual([expect.objectContaining({ scope: "session", limit: 0.5, agent: "freecap" })]);
    expect(events("budget_exceeded", child)).toEqual([]);
    const toasts = () => bus.events.filter((e) => e.type === "tui.toast.show" && String(e.properties?.message).includes("cost budget of freecap cannot work"));
    await waitFor(() => toasts().length > 0, "the toast on the event stream");
    expect(toasts()).toHaveLength(1);
    expect(String(toasts()[0]?.properties?.message)).toContain("the provider reports no prices");
    expect(sessionRecord(project.governanceDir, child)?.budget.costReported).toBe(false);

    const status = await projectCli(project, ["status"]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${child} freecap: the cost budget cannot work: the provider reports no prices`);
    const json = JSON.parse((await projectCli(project, ["status", "--json"])).stdout);
    expect(json.costUnreported).toContainEqual({ sessionId: child, agent: "freecap", scope: "session" });
    const doctor = await projectCli(project, ["doctor"]);
    expect(doctor.stdout).toMatch(/a cost budget cannot work \(freecap\): the provider reported no prices/);
  }, 120_000);

  test("status prints a $0.001 cost limit as $0.001", async () => {
    const root = await serve.http.createSession();
    await serve.http.prompt(root.id, "PARENT penny pennycap");
    await serve.http.waitIdle([root.id], 60_000);
    const child = await childOf(root.id);
    expect(events("budget_exceeded", child)).toEqual([expect.objectContaining({ key: "cost", limit: 0.001 })]);
    const status = await projectCli(project, ["status"]);
    const line = status.stdout.split("\n").find((l) => l.includes(child) && l.includes("pennycap")) ?? "";
    expect(line).toContain("EXCEEDED session cost");
    expect(line).toMatch(/cost \$0\.\d{3}\/\$0\.001\b/);
    expect(line).not.toMatch(/\$0\.00(?!\d)/);
  }, 120_000);
});
