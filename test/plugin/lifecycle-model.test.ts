import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { resumableSessions } from "../../cli/resumable.ts";
import { isRunningSession, sessionStatus } from "../../governance/session/running.ts";
import { stopOrigin } from "../../governance/session/stop-origin.ts";
import { trustFromKey } from "../../governance/storage/record-attestation.ts";
import { enqueue, peekAll } from "../../governance/stop/directive-queue.ts";
import { promptAdmitted } from "../../plugin/hooks/prompt.ts";
import { onEvent } from "../../plugin/opencode-1/event-source.ts";
import { toolBefore } from "../../plugin/opencode-1/tool-calls.ts";
import { events } from "./fixture.ts";
import { TASK_RESULTS } from "./fixtures/task-results.ts";
import { BUDGET, endTask, HOUR, hostAborts, MIN, type Model, PER_PARENT, ROOT, rootStep, running, toolCall, toolPart, World } from "./lifecycle-world.ts";

/**
 * Issue 26 item 5: generated histories over the plugin runtime with a fake host and a fake clock. One project folder,
 * one root session, processes that start, exit normally or are killed, and a host (this file) that does what OpenCode
 * 1.18 does: status and idle events, the `task` tool's ends (a child's result, "Task cancelled", a failed tool part
 * with no `tool.execute.after`), the cascade of an Escape, and the SDK aborts governance asks for. After every command
 * the invariants of the issue are checked; fast-check shrinks a failure to the shortest history and prints its seed.
 */

async function checkInvariants(m: Model, w: World): Promise<void> {
  const records = await w.records();
  const byId = new Map(records.map((r) => [r.sessionId, r]));
  for (const r of records) {
    // 1. Nothing is running or stopping that no live process hosts (a killed one's, until the next process sweeps).
    if (isRunningSession(r) || r.control === "stopping") {
      const hostedHere = w.rt !== undefined && r.hostedBy?.start === `p${w.proc}`;
      const killedNotSwept = !m.live && m.ended === "kill" && r.hostedBy?.start === `p${w.proc}`;
      expect(hostedHere || killedNotSwept, `${r.sessionId} ${sessionStatus(r)} hosted by ${JSON.stringify(r.hostedBy)}`).toBe(true);
    }
    // 2. `orphaned` only after a kill cut its turn off.
    if (sessionStatus(r) === "orphaned")
      expect(m.cutByKill.has(r.sessionId), `${r.sessionId} orphaned without a kill: ${JSON.stringify({ control: r.control, end: r.end })}`).toBe(true);
  }
  for (const r of records) {
    if (r.parentId === null) continue;
    // 8. A budget stop only past the budget: a child being stopped by governance has used at least its limit, raises
    //    applied included (a raise that brings it back under stands the stop down).
    const limit = BUDGET + r.budget.raises.reduce((n, x) => n + (x.add.toolCalls ?? 0), 0);
    if (r.control === "stopping" && stopOrigin(r.stop) === "governance")
      expect(r.counters.toolCalls, `${r.sessionId} stopped by its budget under the limit`).toBeGreaterThanOrEqual(limit);
  }
  // 3. `resume` lists the root exactly when the rules say: idle, interrupted or cut off by a crash (orphaned: issue 43),
  //    inside the window; never while its turn is under way.
  const root = byId.get(ROOT);
  const listed = resumableSessions(records, { now: w.clock.now(), minIdleMs: HOUR, maxIdleMs: 48 * HOUR, anchors: [], trust: trustFromKey(undefined) }).some(
    (s) => s.sessionId === ROOT,
  );
  if (root && m.root !== "none" && m.root !== "running") {
    const idle = w.clock.now() - root.lastActivityAt;
    const expected = m.root === "idle" ? idle >= HOUR && idle < 48 * HOUR : idle < 48 * HOUR;
    expect({ listed, status: sessionStatus(root) }).toEqual({ listed: expected, status: m.root });
  } else if (m.root === "running") expect(listed).toBe(false);
  if (w.rt) {
    const audit = await w.live.ctx.sink.read();
    // 4. Each parent told once, and its model reads each note once in what OpenCode persists.
    const told = audit.filter((e) => e.type === "parent_notified").map((e) => String(e.childId));
    expect(new Set(told).size).toBe(told.length);
    for (const childId of told) expect(w.rootResults.filter((o) => o.includes(childId)).length).toBeLessThanOrEqual(1);
    // Governance's own writes across processes never read as someone else's (record_tampered, issue 27).
    expect(audit.filter((e) => e.type === "record_tampered")).toEqual([]);
    // 9. One exceedance notice per budget until a raise: never more `budget_exceeded` than raises + 1 per session.
    for (const id of new Set(audit.filter((e) => e.type === "budget_exceeded").map((e) => String(e.sessionId)))) {
      const exceeded = audit.filter((e) => e.type === "budget_exceeded" && e.sessionId === id).length;
      const raised = audit.filter((e) => e.type === "budget_raised" && e.sessionId === id).length;
      expect(exceeded, `${id}: ${exceeded} budget_exceeded, ${raised} raises`).toBeLessThanOrEqual(raised + 1);
    }
    // 6. Every guidance delivered at most once.
    const delivered = audit.filter((e) => e.type === "session_injected").map((e) => String(e.injectId));
    expect(new Set(delivered).size).toBe(delivered.length);
    // 5. The concurrency count is the children actually running.
    expect(w.live.budget.running.countFor(ROOT)).toBe(running(m).length);
  } else if (m.ended === "exit") {
    // 7. No lock left after an exit.
    const locks = fs.readdirSync(path.join(w.dir, ".opencode", "governance"), { recursive: true }).filter((f) => String(f).endsWith(".lock"));
    expect(locks).toEqual([]);
  }
}

const PROFILE = new Map<string, number>();
type Cmd = fc.AsyncCommand<Model, World, false>;
const cmd = (name: string, check: (m: Model) => boolean, run: (m: Model, w: World) => Promise<void>): Cmd => ({
  check,
  toString: () => name,
  async run(m, w) {
    const t = performance.now();
    // A second passes between two things a user or the host does (two events in the same millisecond are not a history).
    if (w.timers && w.rt) await w.timers.advance(1000);
    else w.clock.set(w.clock.now() + 1000);
    await run(m, w);
    if (process.env.LIFECYCLE_PROFILE) PROFILE.set(name, (PROFILE.get(name) ?? 0) + performance.now() - t);
    await hostAborts(m, w);
    await checkInvariants(m, w);
  },
});

const canWork = (m: Model) => m.live && m.root === "running";
const pickRunning = (m: Model, i: number) => running(m)[i % Math.max(1, running(m).length)];

const commands = [
  fc.constant(
    cmd(
      "start a process",
      (m) => !m.live,
      async (m, w) => {
        await w.start();
        m.live = true;
        m.ended = "none";
        for (const [id, c] of m.children) if (c.state === "running") c.state = m.cutByKill.has(id) ? "orphaned" : "interrupted";
        if (m.root === "running") m.root = m.cutByKill.has(ROOT) ? "orphaned" : "interrupted";
      },
    ),
  ),
  fc.constant(
    cmd(
      "prompt (or resume) the root",
      (m) => m.live && m.root !== "running",
      async (m, w) => {
        if (m.root === "none") await onEvent(w.live, events.created(ROOT, { agent: "build" }));
        await promptAdmitted(w.live, ROOT, "build");
        await onEvent(w.live, events.status(ROOT, "busy"));
        await rootStep(w);
        await toolCall(w, ROOT);
        m.root = "running";
      },
    ),
  ),
  fc.constant(
    cmd(
      "the root's turn ends",
      (m) => canWork(m) && running(m).length === 0,
      async (m, w) => {
        await rootStep(w);
        await onEvent(w.live, events.status(ROOT, "idle"));
        await onEvent(w.live, events.idle(ROOT));
        m.root = "idle";
      },
    ),
  ),
  fc.constantFrom("valid", "unknown agent", "denied", "failing").map((kind) =>
    cmd(`delegate (${kind})`, canWork, async (m, w) => {
      const callID = `call_${++w.seq}`;
      const full = running(m).length >= PER_PARENT;
      let refused = false;
      try {
        await toolBefore(w.live, { tool: "task", sessionID: ROOT, callID }, { args: { subagent_type: "general", description: "d", prompt: "p" } });
      } catch {
        refused = true;
      }
      expect(refused, `refused with ${running(m).length} running`).toBe(full);
      if (refused || kind === "unknown agent" || kind === "denied") {
        // OpenCode fails the call inside the tool (or a hook refused it): a failed tool part, no tool.execute.after.
        await onEvent(w.live, toolPart(ROOT, callID, "error"));
        return;
      }
      const child = w.id("child");
      await onEvent(w.live, events.created(child, { parentID: ROOT, agent: "general" }));
      await onEvent(w.live, events.status(child, "busy"));
      if (kind === "valid") {
        m.children.set(child, { state: "running", callId: callID });
        return;
      }
      m.children.set(child, { state: "failed", callId: callID });
      await onEvent(w.live, events.errored(child));
      await onEvent(w.live, events.status(child, "idle"));
      await onEvent(w.live, toolPart(ROOT, callID, "error"));
    }),
  ),
  fc.nat(3).map((i) =>
    cmd(
      `child #${i} ends its task`,
      (m) => m.live && running(m).length > 0,
      async (m, w) => {
        const id = pickRunning(m, i)!;
        const child = m.children.get(id)!;
        child.state = "done";
        await onEvent(w.live, events.status(id, "idle"));
        await onEvent(w.live, events.idle(id));
        await endTask(w, id, child.callId, TASK_RESULTS.completed);
      },
    ),
  ),
  fc.nat(3).map((i) =>
    cmd(
      `child #${i} makes a tool call`,
      (m) => m.live && running(m).length > 0,
      async (m, w) => {
        await toolCall(w, pickRunning(m, i)!);
      },
    ),
  ),
  fc.nat(3).map((i) =>
    cmd(
      `child #${i} runs past its budget`,
      (m) => m.live && running(m).length > 0,
      async (m, w) => {
        const id = pickRunning(m, i)!;
        for (let n = 0; n <= BUDGET && m.children.get(id)?.state === "running"; n++) {
          await toolCall(w, id);
          await hostAborts(m, w);
        }
      },
    ),
  ),
  fc.tuple(fc.nat(3), fc.constantFrom(1, 2, 3)).map(([i, level]) =>
    cmd(
      `stop child #${i} at L${level}`,
      (m) => m.live && running(m).length > 0,
      async (m, w) => {
        const id = pickRunning(m, i)!;
        const at = w.clock.now();
        await w.live.stops.begin(id, [{ kind: "stop", id: `stop-${++w.seq}`, at, level: level as 1 | 2 | 3, reason: "model test", by: "cli" }]);
      },
    ),
  ),
  fc.nat(3).map((i) =>
    cmd(
      `inject into child #${i}`,
      (m) => m.live && running(m).length > 0,
      async (m, w) => {
        const id = pickRunning(m, i)!;
        const injectId = `inj-${++w.seq}`;
        await enqueue(w.live.ctx.paths, id, { kind: "inject", id: injectId, at: w.clock.now(), text: "please also check the tests", by: "cli" });
        w.live.stops.inbox.mark(id);
        m.injects.set(injectId, id);
      },
    ),
  ),
  fc.tuple(fc.nat(3), fc.constantFrom(1, 3)).map(([i, add]) =>
    cmd(
      `raise child #${i}'s budget by ${add} tool calls`,
      (m) => m.live && running(m).length > 0,
      async (_m, w) => {
        const id = pickRunning(_m, i)!;
        await enqueue(w.live.ctx.paths, id, {
          kind: "budget",
          id: `raise-${++w.seq}`,
          at: w.clock.now(),
          scope: "session",
          add: { toolCalls: add },
          by: "cli",
        });
        w.live.stops.inbox.mark(id);
      },
    ),
  ),
  fc.constant(
    cmd("a tool of the root fails", canWork, async (_m, w) => {
      const callID = `call_${++w.seq}`;
      await toolBefore(w.live, { tool: "bash", sessionID: ROOT, callID }, { args: { command: "false" } });
      await onEvent(w.live, toolPart(ROOT, callID, "error"));
    }),
  ),
  fc.constant(
    cmd("Escape on the root", canWork, async (m, w) => {
      await onEvent(w.live, events.aborted(ROOT));
      for (const id of running(m)) {
        const child = m.children.get(id)!;
        child.state = "interrupted";
        await onEvent(w.live, events.aborted(id));
        await onEvent(w.live, events.status(id, "idle"));
        await onEvent(w.live, toolPart(ROOT, child.callId, "error"));
      }
      await onEvent(w.live, events.status(ROOT, "idle"));
      await onEvent(w.live, events.idle(ROOT));
      m.root = "interrupted";
    }),
  ),
  fc.constant(
    cmd(
      "the process exits normally",
      (m) => m.live,
      async (m, w) => {
        await w.live.dispose();
        w.rt = undefined;
        m.live = false;
        m.ended = "exit";
        for (const c of m.children.values()) if (c.state === "running") c.state = "interrupted";
        if (m.root === "running") m.root = "interrupted";
      },
    ),
  ),
  fc.constant(
    cmd(
      "the process is killed",
      (m) => m.live,
      async (m, w) => {
        w.live.halt();
        w.rt = undefined;
        m.live = false;
        m.ended = "kill";
        for (const [id, c] of m.children) if (c.state === "running") m.cutByKill.add(id);
        if (m.root === "running") m.cutByKill.add(ROOT);
      },
    ),
  ),
  fc.constantFrom(2 * MIN, 61 * MIN, 49 * HOUR).map((ms) =>
    cmd(
      `time jumps ${ms / MIN} min`,
      () => true,
      async (_m, w) => {
        // A running child has a model stream open: the 10-minute orphan rule must not take it (the host says busy).
        // The wall clock jumps (a suspended machine, a long wait): every timer due fires once, then one sweep period.
        w.clock.set(w.clock.now() + ms - MIN);
        if (w.timers && w.rt) await w.timers.advance(MIN);
        else w.clock.set(w.clock.now() + MIN);
      },
    ),
  ),
];

/** How often each command above is drawn: processes come and go, but most steps are work inside one. */
const WEIGHTS = [2, 4, 2, 6, 3, 4, 2, 2, 2, 2, 1, 2, 1, 1, 2];

/** One generated history: a fresh project folder, the commands above, the invariants after each and at the end. */
const history = () =>
  fc.asyncProperty(
    fc.commands([fc.oneof(...commands.map((arbitrary, i) => ({ arbitrary, weight: WEIGHTS[i]! })))], { maxCommands: 30, size: "max" }),
    async (cmds) => {
      const w = new World();
      const m: Model = { live: true, ended: "none", root: "none", children: new Map(), cutByKill: new Set(), injects: new Map() };
      try {
        await w.start();
        await fc.asyncModelRun(() => ({ model: m, real: w }), cmds);
        // 6. At the end: every guidance delivered once, dropped with a reason, or still queued for its session.
        if (!w.rt) await w.start();
        else await w.live.maintenance.sweep();
        const audit = await w.live.ctx.sink.read();
        for (const [injectId, sessionId] of m.injects) {
          const accounted = audit.some(
            (e) =>
              (e.type === "session_injected" && e.injectId === injectId) ||
              ((e.type === "inject_dropped" || e.type === "stop_ignored") && JSON.stringify(e).includes(injectId)),
          );
          const queued = (await peekAll(w.live.ctx.paths, sessionId)).some((d) => d.id === injectId);
          expect(accounted || queued, `guidance ${injectId} for ${sessionId} lost`).toBe(true);
        }
      } finally {
        if (process.env.LIFECYCLE_PROFILE) console.log(String(cmds));
        w.cleanup();
      }
    },
  );

describe("generated histories across process boundaries (issue 26 item 5)", () => {
  test("every invariant holds after every command of every history", async () => {
    const runs = Number(process.env.LIFECYCLE_RUNS ?? 1000);
    const replay = process.env.LIFECYCLE_SEED ? { seed: Number(process.env.LIFECYCLE_SEED), path: process.env.LIFECYCLE_PATH } : undefined;
    // Histories run in lanes side by side: a history spends most of its time waiting for the file system (a lock, an
    // fsync), which another history's work fills. Each lane is its own fast-check run with its own seed; a failure
    // prints that seed and path, and a replay runs in one lane.
    const lanes = replay ? 1 : Math.max(1, Number(process.env.LIFECYCLE_LANES ?? 4));
    await Promise.all(Array.from({ length: lanes }, () => fc.assert(history(), { numRuns: Math.ceil(runs / lanes), verbose: 1, ...(replay ?? {}) })));
    if (process.env.LIFECYCLE_PROFILE)
      console.log(
        [...PROFILE]
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k}: ${Math.round(v)} ms`)
          .join("\n"),
      );
  }, 600_000);
});
