import {
  createTestProject,
  projectCli,
  serveOpencode,
  startScriptedModel,
  textOf,
  waitFor,
  waitForRecord,
  type ModelRequest,
  type Reply,
} from "../../test/harness/index.ts";
import { BENCH_FILES, benchRead } from "./host.ts";
import { stats, type Stats } from "./stats.ts";

const firstUser = (req: ModelRequest) => textOf(req.messages.find((m) => m.role === "user")?.content);
const lastTool = (req: ModelRequest) => textOf([...req.messages].reverse().find((m) => m.role === "tool")?.content);

/**
 * Root sessions each hand one task to `general`; a "LOOP" child reads the bench files every 100 ms until a tool result
 * carries a stop directive, a "HANG" child streams forever.
 */
function respond(req: ModelRequest): Reply {
  const first = firstUser(req);
  const root = /STOPLAT-ROOT (\w+) (\d+)/.exec(first);
  if (root) {
    if (req.messages.some((m) => m.role === "tool")) return { text: "root done" };
    return { toolCalls: [{ name: "task", args: { subagent_type: "general", description: "loop", prompt: `STOPLAT-CHILD ${root[1]} ${root[2]}` } }] };
  }
  const child = /STOPLAT-CHILD (\w+)/.exec(first);
  if (child?.[1] === "HANG") return { hang: true };
  if (child && /SESSION STOP|SESSION TERMINATED/.test(lastTool(req))) return { text: "stopped" };
  if (child) return { toolCalls: [benchRead(req.messages.filter((m) => m.role === "tool").length)], delayMs: 100 };
  return { text: "ok" };
}

export type StopLatency = { directive: Stats; confirmed: Stats; runs: number; failures: string[] };

/**
 * `opencode-governance stop <child>` run as a user runs it (its own node process), timed from the moment the command
 * is started: (1) to the child's first model request whose last tool result carries the directive; (2) for a child
 * stuck in an endless model stream, to the record's confirmed stop (`control: stopped`, set once OpenCode reports the
 * aborted session idle; the deadline before the hard abort is the configured `stop.deadline`).
 */
export async function stopLatency(runs: number, deadline = "2s"): Promise<StopLatency> {
  const model = await startScriptedModel(respond);
  const project = createTestProject({ modelUrl: model.url, files: BENCH_FILES, governanceYaml: `stop:\n  deadline: ${deadline}\n` });
  const serve = await serveOpencode(project);
  const directive: number[] = [];
  const confirmed: number[] = [];
  const failures: string[] = [];
  // In the project's user environment: the CLI signs its request with that user's key, as the plugin expects.
  const stop = async (id: string) => {
    const res = await projectCli(project, ["stop", id, "--reason", "bench"]);
    if (res.code !== 0) throw new Error(`opencode-governance stop exited ${res.code}: ${res.stderr.slice(0, 200)}`);
  };
  try {
    for (let i = 0; i < runs; i++) {
      for (const kind of ["LOOP", "HANG"] as const) {
        try {
          const root = (await serve.http.createSession()).id;
          await serve.http.promptAsync(root, `STOPLAT-ROOT ${kind} ${i}`);
          const child = await waitFor(() => model.requests.find((r) => firstUser(r).includes(`STOPLAT-CHILD ${kind} ${i}`))?.sessionId, `${kind} child ${i}`);
          if (kind === "LOOP") await waitFor(() => model.requests.filter((r) => r.sessionId === child).length >= 3, "child looping");
          else await waitFor(() => model.requests.some((r) => r.sessionId === child && r.closedAt === undefined), "child streaming");
          const t0 = Date.now();
          await stop(child);
          if (kind === "LOOP") {
            const hit = await waitFor(
              () => model.requests.find((r) => r.sessionId === child && r.receivedAt >= t0 && /SESSION STOP|SESSION TERMINATED/.test(lastTool(r))),
              "directive delivered",
              20_000,
            );
            directive.push(hit.receivedAt - t0);
          } else {
            const rec = await waitForRecord(project.governanceDir, child, (r) => r.control === "stopped", "confirmed stop", 30_000);
            confirmed.push(Number(rec.stoppedAt) - t0);
          }
          await serve.http.waitIdle([root], 30_000);
        } catch (error) {
          failures.push(`${kind} ${i}: ${String(error).slice(0, 200)}`);
        }
      }
    }
    return { directive: stats(directive), confirmed: stats(confirmed), runs, failures };
  } finally {
    await serve.stop();
    await model.close();
    project.cleanup();
  }
}
