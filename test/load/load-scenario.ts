import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  auditEvents,
  createTestProject,
  projectCli,
  serveOpencode,
  startScriptedModel,
  textOf,
  waitFor,
  type ModelRequest,
  type OpencodeHttp,
  type PluginMode,
  type Reply,
  firstUser,
} from "../harness/index.ts";

const toolMessages = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
const STOPPED = /SESSION STOP|SESSION TERMINATED/;

export type LoadOptions = {
  subagents: number;
  callsEach: number;
  cliProcesses?: number;
  actionsEach?: number;
  /** `none`: the same load on an ungoverned OpenCode (no directives), for what a step costs without the plugin. */
  plugin?: PluginMode;
  /** `stop.deadline` (default 10s): shorter than a step under this load, stops end in the hard stop. */
  stopDeadline?: string;
};

export type Directive = { kind: "inject" | "stop"; child: string; token: string; sentAt: number; cliMs: number; code: number };

export type LoadResult = {
  subagents: number;
  callsEach: number;
  wallMs: number;
  /** Most children running at the same moment (first model request → last response closed). */
  peakConcurrent: number;
  directives: Directive[];
  /** Per directive: in how many tool results of its target it appears (want 1), and in how many of other sessions (want 0). */
  delivery: {
    directive: Directive;
    inTarget: number;
    elsewhere: number;
    /** A stop whose child was aborted by the hard stop (its step outlasted the deadline) rather than told at a tool result. */
    hardStopped: boolean;
    latencyMs: number | undefined;
    /**
     * Which of the child's model requests received after the CLI returned (the directive queued) first carried it: 1 =
     * the next one. A step already past its tool call when the directive landed sends the request before it, so 2 is
     * the latest a directive is due; undefined = never.
     */
    stepsAfterQueued: number | undefined;
  }[];
  /** Median time between two model requests of the same child: what one step of a child costs under this load. */
  stepMedianMs: number;
  /** Tool results the model saw, tool calls OpenCode recorded (children), `counters.toolCalls` on disk, after the exit. */
  records: { id: string; parsed: boolean; toolResults: number; toolParts: number | undefined; toolCalls: number | undefined; control: string | undefined }[];
  rootIds: string[];
  childIds: string[];
  /** Anything but records in sessions/ once the process exited (locks, temp files): want none. */
  leftovers: string[];
  audit: { lines: number; unparsable: number; types: Record<string, number>; events: ReturnType<typeof auditEvents> };
  summary: string[];
};

/**
 * One `opencode serve` (with the plugin) running `subagents` root sessions at once, each handing one task to `general`,
 * whose session makes `callsEach` reads; meanwhile `cliProcesses` concurrent loops run the real CLI
 * (`opencode-governance inject|stop`, each call its own node process) against random running children. Returns what
 * a test needs to check delivery (every directive exactly once, to the right session), the records and the audit log.
 */
export async function runLoadScenario(opts: LoadOptions): Promise<LoadResult> {
  const { subagents, callsEach } = opts;
  const cliProcesses = opts.plugin === "none" ? 0 : (opts.cliProcesses ?? 3);
  const actionsEach = opts.actionsEach ?? 4;
  /** Directives are sent only while the child is early enough that it will make more tool calls. */
  const sendBefore = Math.max(3, Math.floor(callsEach * 0.6));
  const respond = (req: ModelRequest): Reply => {
    const first = firstUser(req);
    const root = /LOAD-ROOT (\d+)/.exec(first);
    if (root) {
      if (req.messages.some((m) => m.role === "tool")) return { text: "root done" };
      return { toolCalls: [{ name: "task", args: { subagent_type: "general", description: `load ${root[1]}`, prompt: `LOAD-CHILD ${root[1]}` } }] };
    }
    if (/LOAD-CHILD/.test(first)) {
      const results = toolMessages(req);
      if (results.some((t) => STOPPED.test(t))) return { text: "stopped as asked" };
      if (results.length >= callsEach) return { text: "child done" };
      return { toolCalls: [{ name: "read", args: { filePath: "README.md" } }], delayMs: 20 };
    }
    return { text: "ok" };
  };
  const model = await startScriptedModel(respond);
  const project = createTestProject({
    modelUrl: model.url,
    plugin: opts.plugin ?? "local",
    files: { "README.md": "# load\n" },
    governanceYaml: `stop:\n  deadline: ${opts.stopDeadline ?? "10s"}\n# 20 subagents at once and repeated reads, by design\nconcurrency:\n  perParent: 100\n  perProject: 1000\nloops:\n  enabled: false\n`,
  });
  const serve = await serveOpencode(project);
  const started = Date.now();
  const directives: Directive[] = [];
  try {
    const rootIds: string[] = [];
    for (let i = 0; i < subagents; i++) {
      const id = (await serve.http.createSession({ title: `load ${i}` })).id;
      rootIds.push(id);
      await serve.http.promptAsync(id, `LOAD-ROOT ${i}`);
    }
    const childOf = new Map<string, string>();
    await waitFor(
      () => {
        for (const r of model.requests) {
          const m = /LOAD-CHILD (\d+)/.exec(firstUser(r));
          if (m && r.sessionId) childOf.set(rootIds[Number(m[1])]!, r.sessionId);
        }
        return childOf.size === subagents;
      },
      `all ${subagents} children started`,
      120_000,
    );
    const childIds = rootIds.map((r) => childOf.get(r)!);

    const progress = (child: string) => Math.max(0, ...model.requests.filter((r) => r.sessionId === child).map((r) => toolMessages(r).length));
    const stopped = new Set<string>();
    const injected = new Set<string>();
    const cli = async (args: string[]) => {
      const t0 = Date.now();
      const r = await projectCli(project, args);
      return { code: r.code, ms: Date.now() - t0 };
    };
    const loops = Array.from({ length: cliProcesses }, async (_, loop) => {
      for (let a = 0; a < actionsEach; a++) {
        await new Promise((r) => setTimeout(r, 100 + Math.floor(Math.random() * 400)));
        // One stop per CLI loop (its last action); the rest are injects with a unique token each. A stop goes only to
        // a child that was sent no guidance: stop wins over inject by design (a pending inject is dropped and
        // audited), so a stop racing an inject would make "every inject delivered" untrue without anything wrong.
        const kind = a === actionsEach - 1 ? "stop" : "inject";
        const candidates = childIds.filter((c) => !stopped.has(c) && (kind === "inject" || !injected.has(c)) && progress(c) >= 1 && progress(c) < sendBefore);
        if (candidates.length === 0) continue;
        const child = candidates[Math.floor(Math.random() * candidates.length)]!;
        const token = `LOADTOKEN-${loop}-${a}-${randomBytes(4).toString("hex")}`;
        (kind === "stop" ? stopped : injected).add(child);
        const sentAt = Date.now();
        const res = await cli(kind === "stop" ? ["stop", child, "--reason", token] : ["inject", child, `Please also note ${token}.`]);
        directives.push({ kind, child, token, sentAt, cliMs: res.ms, code: res.code });
      }
    });
    await Promise.all(loops);
    await idleWhileProgressing(serve.http, [...rootIds, ...childIds], () => model.requests.length + model.requests.filter((r) => r.closedAt).length);
    const wallMs = Date.now() - started;
    const spans = childIds.map((c) => {
      const mine = model.requests.filter((r) => r.sessionId === c);
      return [mine[0]?.receivedAt ?? 0, Math.max(...mine.map((r) => r.closedAt ?? r.receivedAt))] as const;
    });
    const peakConcurrent = Math.max(...spans.map(([t]) => spans.filter(([a, b]) => a <= t && t <= b).length));

    // What OpenCode itself recorded: the tool calls of each child (tool parts, whatever their end), read before it exits.
    const toolParts = new Map<string, number>();
    for (const id of childIds) {
      const messages = await serve.http.messages(id);
      toolParts.set(id, messages.flatMap((m) => m.parts).filter((p) => p.type === "tool").length);
    }
    // A normal exit (SIGTERM) flushes the write-behind state and releases every lock (issue 21 item 4): read after it.
    await serve.stop();
    const sessionsDir = path.join(project.governanceDir, "sessions");
    const readRecord = (id: string) => {
      try {
        return JSON.parse(readFileSync(path.join(sessionsDir, `${id}.json`), "utf8")) as Record<string, any>;
      } catch {
        return undefined;
      }
    };
    const lastOf = (id: string) => model.requests.filter((r) => r.sessionId === id).at(-1);
    const hardStopped = new Set(auditEvents(project.governanceDir).flatMap((e) => (e.type === "session_hard_stopped" && e.sessionId ? [e.sessionId] : [])));

    const delivery = directives.map((d) => {
      const last = lastOf(d.child);
      const marker = d.kind === "inject" ? d.token : undefined;
      const inTarget = last ? toolMessages(last).filter((t) => (marker ? t.includes(marker) : /SESSION STOP REQUESTED/.test(t))).length : 0;
      const elsewhere = marker
        ? new Set(model.requests.filter((r) => r.sessionId !== d.child && toolMessages(r).some((t) => t.includes(marker))).map((r) => r.sessionId)).size
        : 0;
      const first = model.requests.find(
        (r) => r.sessionId === d.child && r.receivedAt >= d.sentAt && toolMessages(r).some((t) => (marker ? t.includes(marker) : STOPPED.test(t))),
      );
      const queuedAt = d.sentAt + d.cliMs;
      const stepsAfterQueued = first
        ? Math.max(1, model.requests.filter((r) => r.sessionId === d.child && r.receivedAt >= queuedAt && r.receivedAt <= first.receivedAt).length)
        : undefined;
      return {
        directive: d,
        inTarget,
        elsewhere,
        hardStopped: d.kind === "stop" && hardStopped.has(d.child),
        latencyMs: first ? first.receivedAt - d.sentAt : undefined,
        stepsAfterQueued,
      };
    });
    const records = [...rootIds, ...childIds].map((id) => {
      const rec = readRecord(id);
      const last = lastOf(id);
      return {
        id,
        parsed: rec !== undefined,
        toolResults: last ? toolMessages(last).length : 0,
        toolParts: toolParts.get(id),
        toolCalls: rec?.counters?.toolCalls,
        control: rec?.control,
      };
    });
    const auditFile = path.join(project.governanceDir, "audit.log");
    const raw = (existsSync(auditFile) ? readFileSync(auditFile, "utf8") : "").split("\n").filter((l) => l.trim());
    const unparsable = raw.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    }).length;
    const events = auditEvents(project.governanceDir);
    const types: Record<string, number> = {};
    for (const e of events) types[e.type] = (types[e.type] ?? 0) + 1;
    const extraFiles = existsSync(sessionsDir) ? readdirSync(sessionsDir).filter((f) => !f.endsWith(".json")) : [];

    const gaps = childIds
      .flatMap((c) => {
        const at = model.requests.filter((r) => r.sessionId === c).map((r) => r.receivedAt);
        return at.slice(1).map((t, i) => t - at[i]!);
      })
      .sort((a, b) => a - b);
    const stepMedianMs = gaps[Math.floor(gaps.length / 2)] ?? Number.NaN;
    const steps = delivery.map((d) => (d.hardStopped ? "hard-stopped" : (d.stepsAfterQueued ?? "never")));
    const lat = delivery.flatMap((d) => (d.latencyMs === undefined ? [] : [d.latencyMs])).sort((a, b) => a - b);
    const med = lat.length ? lat[Math.floor(lat.length / 2)]! : Number.NaN;
    const load = [
      `wall ${(wallMs / 1000).toFixed(1)} s for ${subagents} × ${callsEach} calls; at most ${peakConcurrent} children running at the same moment`,
      `one step of a child (model request to its next): median ${stepMedianMs} ms, p90 ${gaps[Math.floor(gaps.length * 0.9)] ?? "–"} ms`,
    ];
    const summary = [
      ...load,
      `${directives.length} directives from ${cliProcesses} CLI processes (${directives.filter((d) => d.kind === "stop").length} stops); delivered exactly once to the right session: ${delivery.filter((d) => d.inTarget === 1 && d.elsewhere === 0).length}/${directives.length}, the others hard-stopped first: ${delivery.filter((d) => d.hardStopped && d.inTarget === 0).length}`,
      `latency CLI start → directive in the child's next tool result: median ${med} ms, max ${lat.at(-1) ?? "–"} ms; CLI process median ${directives.map((d) => d.cliMs).sort((a, b) => a - b)[Math.floor(directives.length / 2)] ?? "–"} ms`,
      `directive carried by the child's model request no. ${steps.join(", ")} after the CLI returned (2 is due: the request under way then carries the tool result before it)`,
      `records: ${records.filter((r) => r.parsed).length}/${records.length} present and parse; children whose counters.toolCalls match the tool calls OpenCode recorded: ${records.filter((r) => r.toolParts !== undefined && r.toolCalls === r.toolParts).length}/${childIds.length}; left in sessions/ after the exit: ${extraFiles.length ? extraFiles.join(", ") : "nothing"}`,
      `audit log: ${raw.length} lines, ${unparsable} unparsable; session_injected ${types.session_injected ?? 0}, session_stop_requested ${types.session_stop_requested ?? 0}, session_stopped ${types.session_stopped ?? 0}, hook_error ${types.hook_error ?? 0}`,
      // What did not go as planned, in the plugin's own words (empty when all is well).
      ...events
        .filter((e) => ["directive_rejected", "inject_dropped", "stop_ignored", "store_problem", "hook_error"].includes(e.type))
        .map((e) => `${e.type}: ${JSON.stringify(e).slice(0, 300)}`),
    ];
    return {
      subagents,
      callsEach,
      wallMs,
      peakConcurrent,
      stepMedianMs,
      directives,
      delivery,
      records,
      rootIds,
      childIds,
      leftovers: extraFiles,
      audit: { lines: raw.length, unparsable, types, events },
      summary: opts.plugin === "none" ? load : summary,
    };
  } finally {
    await serve.stop();
    await model.close();
    project.cleanup();
  }
}

/** Seconds without a single model request or response before the sessions count as hung. */
const STALL_MS = 90_000;

/**
 * Waits until every listed session is idle. What fails is a hang, not a slow machine: it throws only when nothing moved
 * (no model request or response, `progress()`) for {@link STALL_MS} while sessions are still busy. How long a step takes
 * depends on the machine (20 sessions in one OpenCode process on 2 cores: about 8 s a step, with or without the plugin).
 */
async function idleWhileProgressing(http: OpencodeHttp, ids: string[], progress: () => number): Promise<void> {
  let seen = progress();
  let movedAt = Date.now();
  for (;;) {
    const status = await http.status();
    const busy = ids.filter((id) => (status[id]?.type ?? "idle") !== "idle");
    if (busy.length === 0) return;
    const now = progress();
    if (now !== seen) [seen, movedAt] = [now, Date.now()];
    if (Date.now() - movedAt > STALL_MS) throw new Error(`hung: nothing moved for ${STALL_MS / 1000} s with ${busy.length} sessions busy: ${busy.join(", ")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
