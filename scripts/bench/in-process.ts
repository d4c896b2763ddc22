import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { onEvent } from "../../plugin/opencode-1/event-source.ts";
import { messagesTransform } from "../../plugin/opencode-1/model-step.ts";
import { systemTransform } from "../../plugin/opencode-1/model-step.ts";
import { toolAfter } from "../../plugin/opencode-1/tool-calls.ts";
import { toolBefore } from "../../plugin/opencode-1/tool-calls.ts";
import type { HostApi } from "../../plugin/runtime/host-api.ts";
import { Runtime } from "../../plugin/wiring/runtime.ts";
import { Confinement } from "../../plugin/runtime/confinement.ts";
import { PLUGIN_ENTRY } from "../../test/harness/paths.ts";
import { stats, type Stats } from "./stats.ts";

/** The SDK layer with no server behind it: every call succeeds at once, so only governance's own work is timed. */
const fakeApi: HostApi = {
  abort: async () => true,
  status: async () => ({}),
  parentOf: async () => ({ parentId: null, agent: null }),
  toast: async () => undefined,
};

async function governed(dir: string): Promise<Runtime> {
  const rt = new Runtime({ directory: dir }, { api: fakeApi });
  await rt.start();
  return rt;
}

const sid = (i: number) => `ses_bench${String(i).padStart(21, "0")}`;

/** A session history as the messages transform sees it: one user message, then assistant steps with a tool part. */
function history(sessionID: string, n: number) {
  const messages: { info: Record<string, unknown>; parts: Record<string, unknown>[] }[] = [
    { info: { sessionID, role: "user", agent: "build", id: "msg_0" }, parts: [{ type: "text", text: "go", sessionID, messageID: "msg_0" }] },
  ];
  for (let i = 1; i < n; i++) {
    messages.push({
      info: { sessionID, role: "assistant", id: `msg_${i}` },
      parts: [{ type: "tool", tool: "read", sessionID, messageID: `msg_${i}`, state: { status: "completed", output: "x".repeat(200) } }],
    });
  }
  return messages;
}

export type TransformFigures = { size: number; messages: Stats; system: Stats };

/** Both transforms on one session whose history holds `size` messages; O(1) in the history is the goal. */
export async function transforms(sizes: readonly number[], iterations: number): Promise<TransformFigures[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-tr-"));
  const rt = await governed(dir);
  try {
    const out: TransformFigures[] = [];
    for (const size of sizes) {
      const sessionID = sid(size);
      await onEvent(rt, { type: "session.created", properties: { sessionID, info: { id: sessionID, parentID: null } } });
      const messages = history(sessionID, size);
      const m: number[] = [];
      const s: number[] = [];
      for (let i = 0; i < iterations + 20; i++) {
        const t0 = performance.now();
        await messagesTransform(rt, { messages: messages as never });
        const t1 = performance.now();
        await systemTransform(rt, { sessionID }, { system: ["You are opencode."] });
        const t2 = performance.now();
        if (i >= 20) {
          m.push(t1 - t0);
          s.push(t2 - t1);
        }
      }
      out.push({ size, messages: stats(m), system: stats(s) });
    }
    return out;
  } finally {
    await rt.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One tool call's hooks (before + after), `sessions` sessions at once, `calls` calls each: p99 under concurrency. */
export async function toolHooks(sessions: number, calls: number): Promise<{ before: Stats; after: Stats }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-tool-"));
  const rt = await governed(dir);
  const before: number[] = [];
  const after: number[] = [];
  try {
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        const sessionID = sid(100_000 + s);
        await onEvent(rt, { type: "session.created", properties: { sessionID, info: { id: sessionID, parentID: null } } });
        for (let i = 0; i < calls; i++) {
          const input = { tool: "read", sessionID, callID: `call_${s}_${i}` };
          const t0 = performance.now();
          // A different file each call, as a real session's reads mostly are: the loop guard (issue 17) runs, but a
          // session reading the same file over and over with the same result (numbers aside) is what it stops.
          await toolBefore(rt, input, { args: { filePath: `notes/${i}.md` } });
          const t1 = performance.now();
          await toolAfter(rt, input, { title: `notes/${i}.md`, output: `# note ${i}\n`, metadata: {} });
          const t2 = performance.now();
          before.push(t1 - t0);
          after.push(t2 - t1);
        }
      }),
    );
    return { before: stats(before), after: stats(after) };
  } finally {
    await rt.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The shipped plugin's `server()` (dist/plugin/index.js, the bundle) over a project that already holds `records`
 * session records: what OpenCode waits for before the project's first session. Records are copies of one real
 * record, recent (none is archived), so the figure is the cost of merely having them on disk.
 */
export async function pluginStart(records: number, runs: number): Promise<Stats> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-start-"));
  try {
    const seed = await governed(dir);
    const first = sid(0);
    await onEvent(seed, { type: "session.created", properties: { sessionID: first, info: { id: first, parentID: null } } });
    await seed.dispose();
    const sessions = path.join(dir, ".opencode", "governance", "sessions");
    const template = readFileSync(path.join(sessions, `${first}.json`), "utf8");
    mkdirSync(sessions, { recursive: true });
    for (let i = 1; i < records; i++) writeFileSync(path.join(sessions, `${sid(i)}.json`), template.replaceAll(first, sid(i)));
    const plugin = (await import(pathToFileURL(PLUGIN_ENTRY).href)).default as { server: (input: unknown) => Promise<Record<string, unknown>> };
    const times: number[] = [];
    for (let r = 0; r < runs; r++) {
      const t0 = performance.now();
      const hooks = await plugin.server({ directory: dir, worktree: dir, client: {}, project: {}, serverUrl: new URL("http://127.0.0.1:1"), $: undefined });
      times.push(performance.now() - t0);
      await (hooks.dispose as () => Promise<void>)();
    }
    return stats(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Confinement's own work inside a hook (issue 41), no host and no process started: the shell command's rewrite (the
 * options file is written once, at the first shell command; each call is a string concatenation) and the in-process
 * file tools' real-path check of a read and of a write (a `realpath` and a few `stat`s, synchronous).
 */
export async function confinementHook(iterations: number): Promise<{ rewrite: Stats; read: Stats; write: Stats } | undefined> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "ocg-bench-hook-"));
  try {
    mkdirSync(path.join(dir, "notes"));
    for (let i = 0; i < 100; i++) writeFileSync(path.join(dir, "notes", `${i}.md`), `# note ${i}\n`);
    const confinement = new Confinement(dir);
    const state = await confinement.sandbox();
    if (!state.ok) return undefined;
    const time = (fn: (i: number) => unknown) => {
      const out: number[] = [];
      for (let i = 0; i < iterations + 20; i++) {
        const t0 = performance.now();
        fn(i);
        if (i >= 20) out.push(performance.now() - t0);
      }
      return stats(out);
    };
    return {
      rewrite: time((i) => confinement.wrap(`cat notes/${i % 100}.md`, state)),
      read: time((i) => confinement.fileToolHit("read", { filePath: `notes/${i % 100}.md` }, dir)),
      write: time((i) => confinement.fileToolHit("write", { filePath: `notes/${i % 100}.md`, content: "x" }, dir)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
