/**
 * Records what the real OpenCode 2 sends — event payloads on its stream and the inputs of every plugin hook the adapter
 * (plugin/opencode-2/) registers — into test/fixtures/opencode-<version>/*.json, so the double
 * (test/host-contract/opencode-2-double.ts) replays captured shapes and is checked against them, not against source
 * read from index commits (test/host-contract/opencode-2-captures.test.ts), and docs/opencode-2.md's pinned contract
 * is checked against them (test/architecture/opencode-2-pins.test.ts).
 *
 *   flock /tmp/e2e.lock npx tsx scripts/capture-opencode-2.ts        # the 2.0.15 the test prerequisites installed
 *   OPENCODE_BIN=/path/to/opencode-2 flock /tmp/e2e.lock npx tsx scripts/capture-opencode-2.ts
 *
 * One `opencode serve` with a recording plugin (hook inputs, written as they arrive) and the scripted model:
 * - `tools`: the model runs `shell` (success), `bash` (no such tool: failed, no `execute.after`), `read` of a missing
 *   file (failed, `execute.after` with `error`), `subagent explore` (the recorder's
 *   `permission.hook("evaluate")` answers deny: refused before a child exists), `subagent general` (a child, completed);
 * - `compact`: a long answer, then `POST /api/session/<id>/compact` (the `compaction` hook, `session.compaction.ended`);
 * - `escape`: a model that hangs until `POST /api/session/<id>/interrupt` (reason `user`);
 * - `self`: a model that hangs until the recorder calls `ctx.session.interrupt({ sessionID, continue: false })` — what
 *   2.0.15 does with a key its input does not have (probe.session.interrupt.json);
 * - `fail`: a model answering HTTP 400 (`session.execution.failed`).
 * Volatile values (ids, times, paths) are kept as the host sent them: the tests compare shapes, not values.
 */
import fs from "fs-extra";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { opencode2Host } from "../test/harness/host-under-test.ts";
import { createTestProject, lastOf, type ModelRequest, type Reply, serveOpencode2, startScriptedModel, textOf, waitFor } from "../test/harness/index.ts";
import { REPO_ROOT } from "../test/harness/paths.ts";
import type { V2Event } from "../test/harness/opencode-2-http.ts";

/** Every event the adapter reads (plugin/opencode-2/events.ts), each under the file name the tests read. */
export const CAPTURED_EVENTS = [
  "session.created",
  "session.execution.started",
  "session.execution.succeeded",
  "session.execution.failed",
  "session.execution.interrupted",
  "session.step.started",
  "session.step.ended",
  "session.tool.success",
  "session.tool.failed",
  "session.text.delta",
  "session.compaction.ended",
  "session.usage.updated",
] as const;

/**
 * Every hook input the adapter reads (plugin/opencode-2/setup.ts), and the variants it tells apart: a child's
 * `session.created` (`parentID`), a failed call's `execute.after` (`error`), a `subagent` call's result (completed:
 * `metadata.sessionID`; refused: an error whose text names no child).
 */
export const CAPTURED_HOOKS = [
  "session.prompt",
  "session.context",
  "session.compaction",
  "tool.execute.before",
  "tool.execute.after",
  "tool.execute.after.error",
  "tool.execute.after.subagent",
  "tool.execute.after.subagent-refused",
  "permission.evaluate",
] as const;

/** A plugin that only writes down what the host hands it (one JSON line per call), and refuses one spawn. */
const RECORDER = (file: string) => `import fs from "node:fs";
const out = ${JSON.stringify(file)};
const write = (hook, input) => fs.appendFileSync(out, JSON.stringify({ hook, input }) + "\\n");
const firstUser = (e) => JSON.stringify(e.messages.find((m) => m.role === "user") ?? "");
const interrupted = new Set();
export default {
  id: "capture",
  async setup(ctx) {
    await ctx.session.hook("prompt", (e) => write("session.prompt", e));
    await ctx.session.hook("context", (e) => {
      write("session.context", { ...e, system: e.system.slice(0, 1), messages: e.messages.slice(0, 1), tools: Object.fromEntries(Object.entries(e.tools).slice(0, 1)) });
      if (firstUser(e).includes("SELF-INTERRUPT") && !interrupted.has(e.sessionID)) {
        interrupted.add(e.sessionID);
        const input = { sessionID: e.sessionID, continue: false };
        setTimeout(() => ctx.session.interrupt(input).then(
          (value) => write("probe.session.interrupt", { input, resolved: value === undefined ? null : value }),
          (error) => write("probe.session.interrupt", { input, rejected: String(error && (error._tag || error.message) || error) }),
        ), 1500);
      }
    });
    await ctx.session.hook("compaction", (e) => write("session.compaction", { ...e, system: e.system.slice(0, 1), messages: e.messages.slice(0, 1), tools: Object.fromEntries(Object.entries(e.tools).slice(0, 1)) }));
    await ctx.tool.hook("execute.before", (e) => write("tool.execute.before", e));
    await ctx.tool.hook("execute.after", (e) => write("tool.execute.after", e.status === "error" ? { ...e, error: { message: e.error.message, ...e.error } } : e));
    await ctx.permission.hook("evaluate", (e) => {
      write("permission.evaluate", { ...e });
      if (e.action === "subagent" && e.resources.includes("explore")) {
        e.effect = "deny";
        e.message = "capture: refused before the child session exists";
      }
    });
  },
};
`;

function respond(req: ModelRequest): Reply {
  if (req.kind === "compaction") {
    // 2.0.15 checks the summary against its template: answer with the template's headings.
    const asked = req.messages.map((m) => textOf(m.content)).find((t) => t.includes("You MUST summarize the conversation above")) ?? "";
    return { text: (asked.match(/^#{1,4} .+$/gm) ?? ["## Objective"]).map((h) => `${h}\n- scripted summary`).join("\n") };
  }
  const first = textOf(req.messages.find((m) => m.role === "user")?.content);
  const tools = req.messages.filter((m) => m.role === "tool").length;
  if (first.includes("You are a subagent")) return { text: "child done" };
  if (first.includes("HANG")) return { hang: true };
  if (first.includes("FAIL")) return { httpError: 400, message: "capture: a request the provider refuses" };
  if (first.includes("BIG")) return { text: "a very long answer", usage: { prompt_tokens: 150_000, completion_tokens: 400 } };
  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, args }] });
  if (first.includes("TOOLS")) {
    if (tools === 0) return call("shell", { command: "echo captured", description: "capture" });
    if (tools === 1) return call("bash", { command: "echo unknown tool", description: "capture" });
    if (tools === 2) return call("read", { path: "no-such-file.txt" });
    if (tools === 3) return call("subagent", { agent: "explore", description: "refused", prompt: "never runs" });
    if (tools === 4) return call("subagent", { agent: "general", description: "a child", prompt: "answer" });
  }
  return { text: `captured (${lastOf(req, "tool")?.slice(0, 20) ?? "no tool"})` };
}

type HookCall = { hook: string; input: Record<string, unknown> };

async function main(): Promise<void> {
  const found = opencode2Host();
  if (!found.ok) throw new Error(`no OpenCode 2 binary: ${found.reason}`);
  const host = found.host;
  const model = await startScriptedModel(respond);
  const project = createTestProject({ modelUrl: model.url, host, plugin: "none" });
  const hooksFile = path.join(project.dir, "..", "hooks.jsonl");
  fs.outputFileSync(path.join(project.dir, ".opencode", "plugins", "capture.js"), RECORDER(hooksFile));
  const serve = await serveOpencode2(project);
  const stream = serve.api.events();
  const hooks = (): HookCall[] =>
    fs.existsSync(hooksFile)
      ? fs
          .readFileSync(hooksFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as HookCall)
      : [];
  try {
    await stream.ready;
    const tools = await serve.api.createSession();
    await serve.api.run(tools.id, "TOOLS capture the tool events", 90_000);
    const compact = await serve.api.createSession();
    await serve.api.run(compact.id, "BIG answer please");
    const from = Date.now() - 5;
    await serve.api.raw("POST", `/api/session/${compact.id}/compact`, { body: {} });
    await waitFor(() => stream.events.some((e) => e.type === "session.compaction.ended"), "session.compaction.ended", 60_000);
    await serve.api.waitIdle(compact.id, from).catch(() => undefined);
    const escape = await serve.api.createSession();
    await serve.api.prompt(escape.id, "HANG until interrupted");
    await waitFor(() => model.openStreams() > 0, "the model stream open");
    await serve.api.interrupt(escape.id);
    await waitFor(() => stream.events.some((e) => e.type === "session.execution.interrupted"), "session.execution.interrupted");
    const self = await serve.api.createSession();
    await serve.api.prompt(self.id, "SELF-INTERRUPT HANG");
    const probe = await waitFor(() => hooks().find((h) => h.hook === "probe.session.interrupt"), "the recorder's own interrupt", 30_000);
    const selfEnded = await waitFor(
      () => stream.events.find((e) => e.type.startsWith("session.execution.") && e.type !== "session.execution.started" && e.data?.sessionID === self.id),
      "the self-interrupted session's execution ended",
      10_000,
    ).catch(() => undefined);
    const fail = await serve.api.createSession();
    await serve.api.prompt(fail.id, "FAIL please");
    await waitFor(() => stream.events.some((e) => e.type === "session.execution.failed"), "session.execution.failed", 60_000);

    const dir = path.join(REPO_ROOT, "test", "fixtures", `opencode-${host.version}`);
    fs.mkdirpSync(dir);
    const save = (name: string, value: unknown) => fs.writeJsonSync(path.join(dir, `${name}.json`), value, { spaces: 2 });
    for (const type of CAPTURED_EVENTS) {
      const event = stream.events.find((e) => e.type === type && !(type === "session.created" && e.data?.parentID));
      if (!event) throw new Error(`OpenCode ${host.version} sent no ${type}`);
      save(`event.${type}`, event);
    }
    const child = stream.events.find((e): e is V2Event => e.type === "session.created" && typeof e.data?.parentID === "string");
    if (!child) throw new Error("no child session.created");
    save("event.session.created.child", child);
    const calls = hooks();
    const after = calls.filter((h) => h.hook === "tool.execute.after");
    const pick: Record<(typeof CAPTURED_HOOKS)[number], HookCall | undefined> = {
      "session.prompt": calls.find((h) => h.hook === "session.prompt"),
      "session.context": calls.find((h) => h.hook === "session.context"),
      "session.compaction": calls.find((h) => h.hook === "session.compaction"),
      "tool.execute.before": calls.find((h) => h.hook === "tool.execute.before"),
      "tool.execute.after": after.find((h) => h.input.tool === "shell" && h.input.status === "completed"),
      "tool.execute.after.error": after.find((h) => h.input.tool !== "subagent" && h.input.status === "error"),
      "tool.execute.after.subagent": after.find((h) => h.input.tool === "subagent" && h.input.status === "completed"),
      "tool.execute.after.subagent-refused": after.find((h) => h.input.tool === "subagent" && h.input.status === "error"),
      "permission.evaluate": calls.find((h) => h.hook === "permission.evaluate" && h.input.action === "subagent"),
    };
    for (const name of CAPTURED_HOOKS) {
      const call = pick[name];
      if (!call) throw new Error(`OpenCode ${host.version} never called ${name}`);
      save(`hook.${name}`, call.input);
    }
    // What the refused spawn left: no child session under the root but the one `general` made.
    const children = await serve.api.children(tools.id);
    save("probe.permission.evaluate-deny", {
      children: children.map((c) => c.agent),
      refusal: pick["tool.execute.after.subagent-refused"]?.input.error,
    });
    save("probe.session.interrupt", { ...probe.input, ended: selfEnded ? { type: selfEnded.type, reason: selfEnded.data?.reason ?? null } : null });
    console.log(
      `captured ${CAPTURED_EVENTS.length + 1} events and ${CAPTURED_HOOKS.length} hook inputs of OpenCode ${host.version} into ${path.relative(REPO_ROOT, dir)}`,
    );
  } finally {
    if (process.env.CAPTURE_HOOKS_COPY) fs.copySync(hooksFile, process.env.CAPTURE_HOOKS_COPY);
    stream.close();
    await serve.stop();
    await model.close();
    project.cleanup();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
