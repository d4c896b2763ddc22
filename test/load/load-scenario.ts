import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
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
  type Reply,
} from "../harness/index.ts";

const firstUser = (req: ModelRequest) => textOf(req.messages.find((m) => m.role === "user")?.content);
const toolMessages = (req: ModelRequest) => req.messages.filter((m) => m.role === "tool").map((m) => textOf(m.content));
const STOPPED = /SESSION STOP|SESSION TERMINATED/;

export type LoadOptions = { subagents: number; callsEach: number; cliProcesses?: number; actionsEach?: number };

export type Directive = { kind: "inject" | "stop"; child: string; token: string; sentAt: number; cliMs: number; code: number };

export type LoadResult = {
  subagents: number;
  callsEach: number;
  wallMs: number;
  /** Most children running at the same moment (first model request → last response closed). */
  peakConcurrent: number;
  directives: Directive[];
  /** Per directive: in how many tool results of its target it appears (want 1), and in how many of other sessions (want 0). */
  delivery: { directive: Directive; inTarget: number; elsewhere: number; latencyMs: number | undefined }[];
  /** Children: tool results the model saw vs `counters.toolCalls` on disk. */
  records: { id: string; parsed: boolean; toolResults: number; toolCalls: number | undefined; control: string | undefined }[];
  rootIds: string[];
  childIds: string[];
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
  const cliProcesses = opts.cliProcesses ?? 3;
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
    files: { "README.md": "# load\n" },
    governanceYaml:
      "stop:\n  deadline: 10s\n# 20 subagents at once and repeated reads, by design\nconcurrency:\n  perParent: 100\n  perProject: 1000\nloops:\n  enabled: false\n",
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
    await serve.http.waitIdle([...rootIds, ...childIds], 240_000);
    const wallMs = Date.now() - started;
    const spans = childIds.map((c) => {
      const mine = model.requests.filter((r) => r.sessionId === c);
      return [mine[0]?.receivedAt ?? 0, Math.max(...mine.map((r) => r.closedAt ?? r.receivedAt))] as const;
    });
    const peakConcurrent = Math.max(...spans.map(([t]) => spans.filter(([a, b]) => a <= t && t <= b).length));

    // Write-behind counters reach disk within a second of the last step.
    const sessionsDir = path.join(project.governanceDir, "sessions");
    const readRecord = (id: string) => {
      try {
        return JSON.parse(readFileSync(path.join(sessionsDir, `${id}.json`), "utf8")) as Record<string, any>;
      } catch {
        return undefined;
      }
    };
    const lastOfChild = (child: string) => model.requests.filter((r) => r.sessionId === child).at(-1);
    await waitFor(() => childIds.every((c) => readRecord(c)?.counters?.toolCalls === toolMessages(lastOfChild(c)!).length), "counters on disk", 10_000).catch(
      () => undefined,
    );

    const delivery = directives.map((d) => {
      const last = lastOfChild(d.child);
      const marker = d.kind === "inject" ? d.token : undefined;
      const inTarget = last ? toolMessages(last).filter((t) => (marker ? t.includes(marker) : /SESSION STOP REQUESTED/.test(t))).length : 0;
      const elsewhere = marker
        ? new Set(model.requests.filter((r) => r.sessionId !== d.child && toolMessages(r).some((t) => t.includes(marker))).map((r) => r.sessionId)).size
        : 0;
      const first = model.requests.find(
        (r) => r.sessionId === d.child && r.receivedAt >= d.sentAt && toolMessages(r).some((t) => (marker ? t.includes(marker) : STOPPED.test(t))),
      );
      return { directive: d, inTarget, elsewhere, latencyMs: first ? first.receivedAt - d.sentAt : undefined };
    });
    const records = [...rootIds, ...childIds].map((id) => {
      const rec = readRecord(id);
      const last = model.requests.filter((r) => r.sessionId === id).at(-1);
      return { id, parsed: rec !== undefined, toolResults: last ? toolMessages(last).length : 0, toolCalls: rec?.counters?.toolCalls, control: rec?.control };
    });
    const raw = readFileSync(path.join(project.governanceDir, "audit.log"), "utf8")
      .split("\n")
      .filter((l) => l.trim());
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
    const extraFiles = readdirSync(sessionsDir).filter((f) => !f.endsWith(".json"));

    const lat = delivery.flatMap((d) => (d.latencyMs === undefined ? [] : [d.latencyMs])).sort((a, b) => a - b);
    const med = lat.length ? lat[Math.floor(lat.length / 2)]! : Number.NaN;
    const summary = [
      `wall ${(wallMs / 1000).toFixed(1)} s for ${subagents} × ${callsEach} calls; at most ${peakConcurrent} children running at the same moment`,
      `${directives.length} directives from ${cliProcesses} CLI processes (${directives.filter((d) => d.kind === "stop").length} stops); delivered exactly once to the right session: ${delivery.filter((d) => d.inTarget === 1 && d.elsewhere === 0).length}/${directives.length}`,
      `latency CLI start → directive in the child's next tool result: median ${med} ms, max ${lat.at(-1) ?? "–"} ms; CLI process median ${directives.map((d) => d.cliMs).sort((a, b) => a - b)[Math.floor(directives.length / 2)] ?? "–"} ms`,
      `records: ${records.filter((r) => r.parsed).length}/${records.length} present and parse; children whose counters.toolCalls match the tool results the model saw: ${records.filter((r) => childIds.includes(r.id) && r.toolCalls === r.toolResults).length}/${childIds.length}; stray files in sessions/: ${extraFiles.length}`,
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
      directives,
      delivery,
      records,
      rootIds,
      childIds,
      audit: { lines: raw.length, unparsable, types, events },
      summary,
    };
  } finally {
    await serve.stop();
    await model.close();
    project.cleanup();
  }
}
