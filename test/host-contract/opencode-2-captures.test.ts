/**
 * A double replays captures (CONVENTIONS 20): every payload the OpenCode 2 double sends the plugin — the events it
 * emits and the inputs of the hooks it calls — must have the shape the real 2.0.15 sent, as recorded by
 * scripts/capture-opencode-2.ts into test/fixtures/opencode-2.0.15/. A field the double sends that the host does not
 * (the `callID` that hid coverage's blindness, the `kind` before it), or sends with another type, fails here.
 * Values are not compared (ids, times, paths differ per run); keys and JSON types are, two levels deep.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OpenCode2Double } from "./opencode-2-double.ts";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "opencode-2.0.15");
const capture = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, file), "utf8"));

/** Maps whose keys are data (tool names, tool inputs, metadata): compared as "an object", not key by key. */
const OPEN_MAPS = new Set(["tools", "input", "metadata", "result", "error", "model"]);

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Where the double's payload has a key the capture lacks, or a value of another JSON type: `path: why`. */
function shapeDrift(double: unknown, real: unknown, at = "", depth = 0): string[] {
  if (kind(double) !== kind(real)) return [`${at || "(root)"}: the double sends ${kind(double)}, ${kind(real)} was captured`];
  if (kind(double) !== "object" || depth >= 2) return [];
  const d = double as Record<string, unknown>;
  const r = real as Record<string, unknown>;
  return Object.keys(d).flatMap((key) => {
    const here = at ? `${at}.${key}` : key;
    if (!(key in r)) return [`${here}: the double sends it, the real host does not`];
    if (OPEN_MAPS.has(key)) return kind(d[key]) === kind(r[key]) ? [] : [`${here}: the double sends ${kind(d[key])}, ${kind(r[key])} was captured`];
    return shapeDrift(d[key], r[key], here, depth + 1);
  });
}

describe("the OpenCode 2 double sends what the real 2.0.15 sent (test/fixtures/opencode-2.0.15)", () => {
  const host = new OpenCode2Double();
  const hooks = new Map<string, unknown>();
  let dir = "";
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-v2-captures-"));
    // A recording plugin, as the capture script's: the first input of each hook, as JSON (what a plugin can read).
    const keep = (name: string) => (e: unknown) => void (hooks.has(name) || hooks.set(name, JSON.parse(JSON.stringify(e))));
    const recorder = {
      default: {
        id: "recorder",
        async setup(ctx: {
          session: { hook: (n: string, cb: (e: unknown) => void) => Promise<unknown> };
          tool: { hook: (n: string, cb: (e: unknown) => void) => Promise<unknown> };
        }) {
          await ctx.session.hook("context", keep("session.context"));
          await ctx.tool.hook("execute.before", keep("tool.execute.before"));
          await ctx.tool.hook("execute.after", keep("tool.execute.after"));
        },
      },
    };
    await host.load(recorder, dir);
    const s = host.createSession({ directory: dir, agent: "build" });
    await host.prompt(s);
    host.startExecution(s);
    await host.request(s);
    await host.callTool(s, "shell", { command: "echo captured" });
    host.usage(s, { cost: 0.00045, input: 100, output: 10 });
    await host.callTool(s, "shell", { command: "x" }, () => {
      throw new Error('No tool named "bash"');
    });
    host.succeed(s);
    host.startExecution(s);
    host.interrupt(s, "user");
    await host.drain();
  });
  afterAll(async () => {
    await host.unload();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const emitted = (type: string) => {
    const e = host.emitted.find((x) => x.type === type);
    if (!e) throw new Error(`the double emitted no ${type}`);
    return JSON.parse(JSON.stringify(e)) as unknown;
  };

  for (const type of [
    "session.created",
    "session.tool.success",
    "session.tool.failed",
    "session.execution.succeeded",
    "session.execution.interrupted",
    "session.usage.updated",
  ])
    test(`event ${type}`, () => {
      expect(shapeDrift(emitted(type), capture(`event.${type}.json`))).toEqual([]);
    });

  for (const name of ["session.context", "tool.execute.before", "tool.execute.after"])
    test(`hook input ${name}`, () => {
      expect(hooks.has(name), `the double never called ${name}`).toBe(true);
      expect(shapeDrift(hooks.get(name), capture(`hook.${name}.json`))).toEqual([]);
    });

  test("the check sees a drift: `callID` where 2.0.15 sends `id`", () => {
    const real = capture("event.session.tool.success.json") as { data: Record<string, unknown> };
    const { id, ...rest } = real.data;
    const drifted = { ...real, data: { ...rest, callID: id } };
    expect(shapeDrift(drifted, real)).toEqual(["data.callID: the double sends it, the real host does not"]);
  });
});
