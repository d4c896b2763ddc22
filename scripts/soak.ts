/**
 * `npm run soak [-- N [seed]]`: the model-based test's idea on the real host (issue 26 item 5). Plays N random
 * histories on the real `opencode serve` of one project each — turns, delegation (valid, unknown agent), Escape, an
 * ordinary exit (SIGTERM), a kill (-9), a restart — and after every step checks the invariants the in-process test
 * checks, as a user reads them (records, `sessions --all --json`, `resume --json`, what the model was sent):
 * nothing running that no live process hosts; `orphaned` only after a kill cut a turn off; `resume` lists the
 * interrupted and idle roots; mistyped agent names never use up the concurrency slots; no lock after an exit.
 * Not part of `npm test` (a history takes tens of seconds on the real binary). Prints what it found; exit 1 on a
 * violation. Figures: docs/testing.md.
 */
import fs from "node:fs";
import {
  allSessionRecords,
  createTestProject,
  locksLeft,
  type ModelRequest,
  projectCli,
  type Reply,
  type ServeHandle,
  serveOpencode,
  startScriptedModel,
  type TestProject,
  textOf,
  waitFor,
} from "../test/harness/index.ts";
import { ensureOpencodeBinary, ensureWarmDeps } from "../test/harness/warm-cache.ts";

const N = Number(process.argv[2] ?? 3);
let seed = Number(process.argv[3] ?? Date.now() % 100_000);
const SEED = seed;
/** A small seeded generator (mulberry32): a failing history is replayed with the same seed. */
function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const task = (agent: string): Reply => ({ toolCalls: [{ name: "task", args: { description: "work", prompt: "CHILD answer", subagent_type: agent } }] });
function respond(req: ModelRequest): Reply {
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  if (first.includes("CHILD")) return { text: "child answer" };
  const last = [...req.messages].reverse().find((m) => m.role === "user" && /TYPO|DELEGATE|HANG|PLAIN/.test(textOf(m.content)));
  const ask = textOf(last?.content);
  const since = last ? req.messages.slice(req.messages.indexOf(last)).filter((m) => m.role === "tool").length : tools;
  if (ask.includes("HANG")) return { hang: true };
  if (ask.includes("TYPO")) return since < 3 ? task("no-such-agent") : since < 5 ? task("general") : { text: "typos done" };
  if (ask.includes("DELEGATE")) return since < 1 ? task("general") : { text: "delegated" };
  return { text: "plain" };
}

type Step =
  | "plain turn"
  | "delegate"
  | "three typos, two valid"
  | "Escape a turn"
  | "exit mid-turn (SIGTERM)"
  | "exit (SIGTERM)"
  | "kill mid-turn (-9)"
  | "restart";
const found: string[] = [];
const counts = { histories: 0, steps: 0, starts: 0, exits: 0, kills: 0, checks: 0 };

async function history(h: number): Promise<void> {
  const model = await startScriptedModel(respond);
  const project = createTestProject({ modelUrl: model.url, governanceYaml: "concurrency:\n  perParent: 2\nloops:\n  enabled: false\n" });
  let serve: ServeHandle | undefined;
  const cutByKill = new Set<string>();
  const resumable = new Set<string>();
  const log: string[] = [];
  const fail = (what: string) => found.push(`history ${h} (seed ${SEED}) after [${log.join(", ")}]: ${what}`);
  const start = async () => {
    serve = await serveOpencode(project);
    counts.starts++;
    await serve.http.status(); // the first request for the project loads its plugins (and their start-up sweep)
    await new Promise((r) => setTimeout(r, 2_500)); // the start-up sweep runs behind
  };
  const hanging = async (): Promise<string> => {
    const id = (await serve!.http.createSession()).id;
    await serve!.http.promptAsync(id, "HANG think");
    await waitFor(() => model.requests.some((r) => r.sessionId === id && r.closedAt === undefined), "turn streaming", 30_000);
    return id;
  };
  try {
    await start();
    for (let i = 0; i < 6; i++) {
      const step: Step = serve
        ? pick([
            "plain turn",
            "delegate",
            "three typos, two valid",
            "Escape a turn",
            "exit mid-turn (SIGTERM)",
            "exit (SIGTERM)",
            "kill mid-turn (-9)",
          ] as const)
        : "restart";
      log.push(step);
      counts.steps++;
      if (step === "restart") await start();
      else if (step === "plain turn" || step === "delegate") {
        const id = (await serve!.http.createSession()).id;
        await serve!.http.prompt(id, step === "plain turn" ? "PLAIN hello" : "DELEGATE please");
        await serve!.http.waitIdle([id], 60_000);
      } else if (step === "three typos, two valid") {
        const id = (await serve!.http.createSession()).id;
        await serve!.http.prompt(id, "TYPO please");
        await serve!.http.waitIdle([id], 60_000);
        const last = model.requests.filter((r) => r.sessionId === id).at(-1);
        const refused = (last?.messages ?? []).filter((m) => m.role === "tool" && textOf(m.content).includes("SPAWN REFUSED")).length;
        counts.checks++;
        if (refused > 0) fail(`${refused} valid spawn(s) refused after three unknown-agent calls, no child running`);
      } else if (step === "Escape a turn") {
        const id = await hanging();
        await serve!.http.abort(id);
        await serve!.http.waitIdle([id], 30_000);
        resumable.add(id);
      } else if (step === "exit mid-turn (SIGTERM)" || step === "exit (SIGTERM)") {
        if (step === "exit mid-turn (SIGTERM)") resumable.add(await hanging());
        await serve!.stop("SIGTERM");
        serve = undefined;
        counts.exits++;
        counts.checks++;
        const locks = fs.existsSync(project.governanceDir) ? locksLeft(project.governanceDir) : [];
        if (locks.length > 0) fail(`locks left after an exit: ${locks.join(", ")}`);
      } else if (step === "kill mid-turn (-9)") {
        cutByKill.add(await hanging());
        await serve!.crash();
        serve = undefined;
        counts.kills++;
      }
      if (serve) await check(project, cutByKill, resumable, fail);
    }
  } finally {
    await serve?.stop();
    await model.close();
    project.cleanup();
    counts.histories++;
    console.log(`history ${h}: ${log.join(" → ")}`);
  }
}

/** The invariants, with a live process (its start-up sweep done). */
async function check(project: TestProject, cutByKill: Set<string>, resumable: Set<string>, fail: (what: string) => void): Promise<void> {
  counts.checks++;
  const rows = JSON.parse((await projectCli(project, ["sessions", "--all", "--json"])).stdout).sessions as {
    sessionId: string;
    status: string;
    running: boolean;
  }[];
  for (const r of rows) if (r.status === "orphaned" && !cutByKill.has(r.sessionId)) fail(`${r.sessionId} orphaned, but no kill cut its turn off`);
  const listed = new Set((JSON.parse((await projectCli(project, ["resume", "--json"])).stdout).resumable as { sessionId: string }[]).map((s) => s.sessionId));
  for (const id of resumable) if (!listed.has(id)) fail(`${id} (interrupted) missing from resume`);
  for (const r of allSessionRecords(project.governanceDir)) {
    const running =
      r.control === "stopping" || (r.control === "active" && r.state !== "interrupted" && !(r.idleAt !== null && r.idleAt >= r.lastActivityAt) && !r.end);
    if (running && cutByKill.has(r.sessionId)) fail(`${r.sessionId} still running after its process was killed and a new one swept`);
  }
}

await ensureOpencodeBinary();
await ensureWarmDeps();
const began = Date.now();
console.log(`soak: ${N} histories on the real opencode serve, seed ${SEED}`);
for (let h = 1; h <= N; h++) await history(h);
const secs = Math.round((Date.now() - began) / 1000);
console.log(
  `soak: ${counts.histories} histories, ${counts.steps} steps, ${counts.starts} processes started, ${counts.exits} ordinary exits, ${counts.kills} kills, ${counts.checks} checks, ${secs} s`,
);
if (found.length === 0) console.log("soak: every invariant held");
else {
  console.log(`soak: ${found.length} violation(s):`);
  for (const f of found) console.log(`  ${f}`);
  process.exitCode = 1;
}
