/**
 * Records what the real OpenCode 2 sends — event payloads on its stream and the inputs of the plugin hooks governance
 * uses — into test/fixtures/opencode-<version>/*.json, so the double (test/host-contract/opencode-2-double.ts) is
 * checked against captures, not against source read from index commits (test/host-contract/opencode-2-captures.test.ts).
 *
 *   flock /tmp/e2e.lock npx tsx scripts/capture-opencode-2.ts        # the 2.0.15 the test prerequisites installed
 *   OPENCODE_BIN=/path/to/opencode-2 flock /tmp/e2e.lock npx tsx scripts/capture-opencode-2.ts
 *
 * One `opencode serve` with a recording plugin (hook inputs, written as they arrive) and the scripted model: a session
 * whose model runs `shell` once (success), asks for a tool the host does not have (`bash`: failed), then answers;
 * a second session whose model hangs until it is interrupted. Volatile values (ids, times, paths) are kept as the host
 * sent them: the contract test compares shapes (keys and value types), not values.
 */
import fs from "fs-extra";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { opencode2Host } from "../test/harness/host-under-test.ts";
import { createTestProject, serveOpencode2, startScriptedModel, textOf, waitFor } from "../test/harness/index.ts";
import { REPO_ROOT } from "../test/harness/paths.ts";
import type { V2Event } from "../test/harness/opencode-2-http.ts";

/** The events and hooks kept, each under the file name the contract test reads. */
export const CAPTURED_EVENTS = [
  "session.created",
  "session.tool.success",
  "session.tool.failed",
  "session.execution.succeeded",
  "session.execution.interrupted",
  "session.usage.updated",
];
export const CAPTURED_HOOKS = ["session.context", "tool.execute.before", "tool.execute.after"];

/** A plugin that only writes down what the host hands it (one JSON line per call). */
const RECORDER = (file: string) => `import fs from "node:fs";
const out = ${JSON.stringify(file)};
const write = (hook, input) => fs.appendFileSync(out, JSON.stringify({ hook, input }) + "\\n");
export default {
  id: "capture",
  async setup(ctx) {
    await ctx.session.hook("context", (e) => write("session.context", { ...e, system: e.system.slice(0, 1), messages: e.messages.slice(0, 1), tools: Object.fromEntries(Object.entries(e.tools).slice(0, 1)) }));
    await ctx.tool.hook("execute.before", (e) => write("tool.execute.before", e));
    await ctx.tool.hook("execute.after", (e) => write("tool.execute.after", e));
  },
};
`;

async function main(): Promise<void> {
  const found = opencode2Host();
  if (!found.ok) throw new Error(`no OpenCode 2 binary: ${found.reason}`);
  const host = found.host;
  const model = await startScriptedModel((req) => {
    const first = textOf(req.messages.find((m) => m.role === "user")?.content);
    const tools = req.messages.filter((m) => m.role === "tool").length;
    if (first.includes("HANG")) return { hang: true };
    if (tools === 0) return { toolCalls: [{ name: "shell", args: { command: "echo captured", description: "capture" } }] };
    if (tools === 1) return { toolCalls: [{ name: "bash", args: { command: "echo unknown tool", description: "capture" } }] };
    return { text: "captured" };
  });
  const project = createTestProject({ modelUrl: model.url, host, plugin: "none" });
  const hooksFile = path.join(project.dir, "..", "hooks.jsonl");
  fs.outputFileSync(path.join(project.dir, ".opencode", "plugins", "capture.js"), RECORDER(hooksFile));
  const serve = await serveOpencode2(project);
  const stream = serve.api.events();
  try {
    await stream.ready;
    const tools = await serve.api.createSession();
    await serve.api.run(tools.id, "capture the tool events");
    const hang = await serve.api.createSession();
    await serve.api.prompt(hang.id, "HANG until interrupted");
    await waitFor(() => model.openStreams() > 0, "the model stream open");
    await serve.api.interrupt(hang.id);
    await waitFor(() => stream.events.some((e) => e.type === "session.execution.interrupted"), "session.execution.interrupted");
    const dir = path.join(REPO_ROOT, "test", "fixtures", `opencode-${host.version}`);
    fs.mkdirpSync(dir);
    const first = (type: string): V2Event | undefined => stream.events.find((e) => e.type === type);
    for (const type of CAPTURED_EVENTS) {
      const event = first(type);
      if (!event) throw new Error(`OpenCode ${host.version} sent no ${type}`);
      fs.writeJsonSync(path.join(dir, `event.${type}.json`), event, { spaces: 2 });
    }
    const hooks = fs
      .readFileSync(hooksFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { hook: string; input: unknown });
    for (const name of CAPTURED_HOOKS) {
      const call = hooks.find((h) => h.hook === name);
      if (!call) throw new Error(`OpenCode ${host.version} never called ${name}`);
      fs.writeJsonSync(path.join(dir, `hook.${name}.json`), call.input, { spaces: 2 });
    }
    console.log(
      `captured ${CAPTURED_EVENTS.length} events and ${CAPTURED_HOOKS.length} hook inputs of OpenCode ${host.version} into ${path.relative(REPO_ROOT, dir)}`,
    );
  } finally {
    stream.close();
    await serve.stop();
    await model.close();
    project.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
