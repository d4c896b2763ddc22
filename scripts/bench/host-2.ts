import type { HostUnderTest } from "../../test/harness/host-under-test.ts";
import { serveOpencode, serveOpencode2, type TestProject } from "../../test/harness/index.ts";

/**
 * The bench on either host line (issue 40 item 5): one `opencode serve` per run, started as its users start it —
 * OpenCode 1's session API, or OpenCode 2's v2 API behind its server password (test/harness/opencode-process.ts) —
 * seen through the three calls a run needs.
 */
export type BenchServe = {
  createSession(): Promise<{ id: string }>;
  /** Sends the prompt and resolves when the turn it starts has ended. */
  prompt(sessionId: string, text: string): Promise<void>;
  stop(): Promise<unknown>;
};

export async function serveForBench(project: TestProject, env: NodeJS.ProcessEnv): Promise<BenchServe> {
  if (project.host.line === 2) {
    const serve = await serveOpencode2(project, { env });
    return {
      createSession: () => serve.api.createSession(),
      prompt: async (id, text) => {
        const idle = await serve.api.run(id, text, 300_000);
        if (idle.outcome !== "succeeded") throw new Error(`the turn ended ${idle.outcome ?? "without an outcome"}`);
      },
      stop: () => serve.stop(),
    };
  }
  const serve = await serveOpencode(project, { env });
  return {
    createSession: () => serve.http.createSession(),
    prompt: async (id, text) => {
      await serve.http.prompt(id, text);
    },
    stop: () => serve.stop(),
  };
}

/**
 * OpenCode 2's empty-hooks plugin: the `setup` entry registering what governance registers on 2.0.15
 * (plugin/opencode-2/setup.ts) — the session hooks `prompt`, `context`, `compaction`, the tool hooks `execute.before`
 * and `execute.after`, a tool transform, and the event stream read to its end — each doing nothing.
 */
export const EMPTY_HOOKS_PLUGIN_V2 = `const noop = async () => {};
export default { id: "empty-hooks", setup: async (ctx) => {
  const regs = await Promise.all([
    ctx.session.hook("prompt", noop), ctx.session.hook("context", noop), ctx.session.hook("compaction", noop),
    ctx.tool.hook("execute.before", noop), ctx.tool.hook("execute.after", noop), ctx.tool.transform(() => {}),
  ]);
  let stopped = false;
  const events = ctx.event.subscribe()[Symbol.asyncIterator]();
  void (async () => { while (!stopped) { const r = await events.next(); if (r.done) break; } })().catch(() => {});
  return async () => { stopped = true; await events.return?.(); for (const r of regs) await r.dispose().catch(() => {}); };
} };
`;

/** The folder a host loads project plugins from (OpenCode 1: `.opencode/plugin/`, OpenCode 2: `.opencode/plugins/`). */
export const pluginFolder = (host: HostUnderTest) => (host.line === 2 ? "plugins" : "plugin");
