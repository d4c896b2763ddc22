import { describe, expect, it } from "vitest";
import { HooksConfig } from "../../../governance/config/hooks-config.ts";
import { enqueueRun, hookFailure, hookPayload, hookRuns, IDLE_LANE, MAX_WAITING, runEnded } from "../../../governance/user-hooks/hook-plan.ts";

const AT = Date.UTC(2026, 10, 28, 14, 0, 0);
const hooks = HooksConfig.parse({
  session_stopped: [{ command: "notify-send stopped" }, { url: "https://chat.example.com/hooks/T0/SECRET", timeout: "3s" }],
  budget_exceeded: { command: "cat >> ~/budget.log" },
});

describe("which events trigger which hooks", () => {
  it("each action under the event's type, in the file's order, with its timeout (10 s by default)", () => {
    const runs = hookRuns(hooks, "session_stopped", { sessionId: "ses_a", how: "ladder" }, AT, "/home/u/proj");
    expect(runs.map((r) => [r.key, r.timeoutMs, "url" in r.action])).toEqual([
      ["session_stopped#0", 10_000, false],
      ["session_stopped#1", 3_000, true],
    ]);
    expect(runs[0]!.body).toBe(runs[1]!.body);
  });

  it("a single action is a list of one; a type no hook names triggers nothing", () => {
    expect(hookRuns(hooks, "budget_exceeded", {}, AT, "/p")).toHaveLength(1);
    expect(hookRuns(hooks, "delegation_blocked", {}, AT, "/p")).toEqual([]);
  });

  it("hook_failed is never a trigger, and cannot be configured as one (a failing hook would feed itself)", () => {
    expect(hookRuns({ ...hooks, hook_failed: [{ command: "x" }] } as never, "hook_failed", {}, AT, "/p")).toEqual([]);
    expect(HooksConfig.safeParse({ hook_failed: { command: "x" } }).success).toBe(false);
  });

  it("refuses an unknown event name, a bad URL, a timeout over 60 s, and more than 5 actions for one event", () => {
    expect(HooksConfig.safeParse({ session_stoped: { command: "x" } }).success).toBe(false);
    expect(HooksConfig.safeParse({ session_stopped: { url: "file:///etc/passwd" } }).success).toBe(false);
    expect(HooksConfig.safeParse({ session_stopped: { command: "x", timeout: "2m" } }).success).toBe(false);
    expect(HooksConfig.safeParse({ session_stopped: Array.from({ length: 6 }, () => ({ command: "x" })) }).success).toBe(false);
    expect(HooksConfig.safeParse({ session_stopped: { command: "x", url: "https://a" } }).success).toBe(false);
  });
});

describe("what a hook receives", () => {
  it("a hard stop's payload names the stopped agent and its parent from the session's record (the audit line has only the request)", () => {
    const stopHooks = HooksConfig.parse({ session_hard_stopped: { command: "x" } });
    const data = { sessionId: "ses_child", requestId: "stop-1", attempt: 1 };
    const [run] = hookRuns(stopHooks, "session_hard_stopped", data, AT, "/home/u/shop", { agent: "builder", parentId: "ses_root" });
    const body = JSON.parse(run!.body);
    expect(body.fields).toMatchObject({ agent: "builder", parentId: "ses_root", requestId: "stop-1" });
    expect(body.text).toContain("agent builder");
    // What the line says wins; a root (no parent) gets no parentId; no record leaves the line as it is.
    const own = JSON.parse(hookRuns(stopHooks, "session_hard_stopped", { ...data, agent: "tester" }, AT, "/p", { agent: "builder", parentId: null })[0]!.body);
    expect(own.fields.agent).toBe("tester");
    expect(own.fields).not.toHaveProperty("parentId");
    expect(JSON.parse(hookRuns(stopHooks, "session_hard_stopped", data, AT, "/p")[0]!.body).fields).not.toHaveProperty("agent");
  });

  it("the event, its time, the project's folder name, its session and allow-listed fields, and one line for a person", () => {
    const p = hookPayload(
      "budget_exceeded",
      { sessionId: "ses_b", agent: "builder", scope: "session", key: "cost", used: 0.6, limit: 0.5 },
      AT,
      "/home/alice/shop",
    );
    expect(p).toEqual({
      version: 1,
      event: "budget_exceeded",
      at: "2026-11-28T14:00:00.000Z",
      project: "shop",
      sessionId: "ses_b",
      fields: { agent: "builder", scope: "session", key: "cost", used: 0.6, limit: 0.5 },
      text: "opencode-governance [shop] budget exceeded in session ses_b: agent builder, scope session, key cost, used 0.6, limit 0.5",
    });
  });

  it("no free text, no paths, no user name, no secret: the stop reason, guidance, error messages and files stay home", () => {
    const data = {
      sessionId: "ses_c",
      reason: "my token is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
      preview: "guidance text",
      message: "Error: EACCES /home/alice/.ssh/id_rsa",
      file: "/home/alice/shop/.opencode/governance.yaml",
      directory: "/home/alice/shop",
      by: "cli:alice",
      key: "cost",
      command: "curl -H 'Authorization: Bearer xyz' …",
    };
    const body = JSON.stringify(hookPayload("session_stopped", data, AT, "/home/alice/shop"));
    for (const secret of ["sk-ant", "guidance text", "EACCES", ".ssh", "/home/alice", "alice", "Bearer"]) expect(body).not.toContain(secret);
    expect(JSON.parse(body).fields).toEqual({ by: "cli", key: "cost" });
  });
});

describe("in which order hooks run", () => {
  const [a, b] = hookRuns(hooks, "session_stopped", {}, AT, "/p");
  it("an idle action starts at once; the next run of the same action waits for it, then starts", () => {
    const first = enqueueRun(IDLE_LANE, a!);
    expect(first.start).toBe(a);
    const second = enqueueRun(first.lane, a!);
    expect(second.start).toBeNull();
    expect(second.lane.waiting).toHaveLength(1);
    const after = runEnded(second.lane);
    expect(after.start).toBe(a);
    expect(runEnded(after.lane)).toEqual({ lane: IDLE_LANE, start: null });
    expect(b!.key).not.toBe(a!.key); // another action has its own lane: a hanging command holds back only itself
  });

  it("a burst beyond the waiting bound drops the oldest waiting run, which is reported", () => {
    let lane = enqueueRun(IDLE_LANE, a!).lane;
    const dropped = [];
    for (let i = 0; i <= MAX_WAITING; i++) {
      const r = enqueueRun(lane, { ...a!, body: String(i) });
      lane = r.lane;
      if (r.dropped) dropped.push(r.dropped.body);
    }
    expect(dropped).toEqual(["0"]);
    expect(lane.waiting).toHaveLength(MAX_WAITING);
  });
});

describe("what a failure leaves in the audit log", () => {
  const [cmd, hook] = hookRuns(hooks, "session_stopped", {}, AT, "/p");
  it("the event, the action's position and kind, why and how long — never the command or the URL", () => {
    expect(hookFailure(cmd!, { ok: true }, 5)).toBeNull();
    expect(hookFailure(cmd!, { ok: false, why: "exit", exitCode: 3 }, 12.4)).toEqual({
      event: "session_stopped",
      action: 0,
      target: "command",
      why: "exit",
      exitCode: 3,
      ms: 12,
      timeoutMs: 10_000,
    });
    const line = JSON.stringify(hookFailure(hook!, { ok: false, why: "http", status: 500 }, 40));
    expect(line).toContain('"status":500');
    expect(line).not.toContain("SECRET");
    expect(line).not.toContain("notify-send");
  });
});
