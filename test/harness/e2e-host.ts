import { afterAll, beforeAll, describe, test } from "vitest";
import { auditEvents } from "./governance-files.ts";
import { type HostUnderTest, opencode2Host } from "./host-under-test.ts";
import { type ServeHandle, type ServeHandle2, serveOpencode, serveOpencode2 } from "./opencode-process.ts";
import { type ProjectCliResult, projectCli } from "./project-cli.ts";
import { type ModelRequest, type Respond, type ScriptedModel, startScriptedModel } from "./scripted-model.ts";
import { createTestProject, type ProjectOptions, type TestProject } from "./test-project.ts";

/**
 * The prelude every end-to-end file shares, called at describe level: a scripted model, a test project and (unless
 * `serve: false`) one `opencode serve`, started in a beforeAll and stopped in an afterAll that this helper registers.
 * The handles it returns are lazy: they stand for the objects the beforeAll makes, so a file destructures them at
 * describe level (`const { model, project, serve } = e2eHost({ respond })`) and uses them in its tests as it did its
 * own `let`s. A file's own beforeAll runs after this one; its own afterAll before this one (vitest runs after-hooks
 * in reverse), so it can release its gates before the server stops.
 */
export type E2eOptions = Omit<ProjectOptions, "modelUrl" | "opencodeConfig" | "host"> & {
  /** The scripted model's script (test/harness/scripted-model.ts). */
  respond?: Respond;
  /** Merged into opencode.json; a function when it needs the model's URL (a priced provider). */
  opencodeConfig?: Record<string, unknown> | ((modelUrl: string) => Record<string, unknown>);
  /** `false`: no server in the beforeAll (the file runs `opencode run`, or starts servers itself with `startServe`). */
  serve?: boolean;
  /** Environment of the server started in the beforeAll (libfaketime, OTel, a test switch); a function to read it then. */
  serveEnv?: NodeJS.ProcessEnv | (() => NodeJS.ProcessEnv);
  /** Runs after the project is made, before its server starts (a policy file, a variable in `project.env`). */
  beforeServe?: (project: TestProject, model: ScriptedModel) => void | Promise<void>;
  /** Runs in the afterAll once the servers stopped, before the project folder goes (a receiver the server exported to). */
  afterServe?: () => unknown;
  /** The beforeAll's limit (vitest's hookTimeout by default). */
  timeoutMs?: number;
};

export type E2e<S> = {
  model: ScriptedModel;
  project: TestProject;
  /** The server started last (by the beforeAll or by `startServe`). */
  serve: S;
  /** One more `opencode serve` of the project (after a crash or a stop, or beside the first); stopped in the afterAll. */
  startServe(opts?: { env?: NodeJS.ProcessEnv }): Promise<S>;
  /** The agent steps (model requests) of one session, from request number `from` on. */
  stepsOf(sessionId: string, from?: number): ModelRequest[];
  /** The project's audit events of one type, of one session when given. */
  events(type: string, sessionId?: string): ReturnType<typeof auditEvents>;
  /** The built CLI in the project's user environment. */
  cli(...args: string[]): Promise<ProjectCliResult>;
};

/**
 * The options, or a function that gives them when the beforeAll runs (when they hold what a beforeAll of the file's
 * own, registered before this call, started: a collector's URL).
 */
export type E2eOptionsArg = E2eOptions | (() => E2eOptions);

/** The prelude on the suite's host (OpenCode 1.18.33 unless `OPENCODE_BIN` says otherwise): its `serve` has the 1.x HTTP client. */
export function e2eHost(opts: E2eOptionsArg = {}): E2e<ServeHandle> {
  return prelude(opts, undefined, (project, env) => serveOpencode(project, { env }));
}

/** The prelude on an OpenCode 2 binary (from `onOpencode2`): its `serve` has the v2 API client (`serve.api`). */
export function e2eHost2(host: HostUnderTest, opts: E2eOptionsArg = {}): E2e<ServeHandle2> {
  return prelude(opts, host, (project, env) => serveOpencode2(project, { env }));
}

/** The scripted model alone, for a file whose tests make their own projects (one per case, with and without the plugin). */
export function e2eModel(respond?: Respond): ScriptedModel {
  let model: ScriptedModel | undefined;
  beforeAll(async () => {
    model = await startScriptedModel(respond);
  });
  afterAll(async () => model?.close());
  return lazy("the scripted model", () => model);
}

/**
 * A describe body on OpenCode 2: the released 2.0.15 (test/harness/opencode-2-binary.ts) or the OpenCode 2 that
 * `OPENCODE_BIN` names; without one, a skipped test says why under `skipTitle`.
 */
export function onOpencode2(skipTitle: string, body: (host: HostUnderTest) => void): void {
  const found = opencode2Host();
  if (found.ok) body(found.host);
  else
    describe(skipTitle, () => {
      test.skip(`SKIPPED: no OpenCode 2 binary: ${found.reason}`, () => {});
    });
}

function prelude<S extends { stop(): Promise<unknown> }>(
  optsArg: E2eOptionsArg,
  host: HostUnderTest | undefined,
  start: (project: TestProject, env: NodeJS.ProcessEnv | undefined) => Promise<S>,
): E2e<S> {
  const resolve = () => (typeof optsArg === "function" ? optsArg() : optsArg);
  let afterServe: E2eOptions["afterServe"];
  let model: ScriptedModel | undefined;
  let project: TestProject | undefined;
  const servers: S[] = [];
  const startServe = async (o: { env?: NodeJS.ProcessEnv } = {}) => {
    const s = await start(project!, o.env);
    servers.push(s);
    return s;
  };
  beforeAll(
    async () => {
      const { respond, opencodeConfig, serve: serveAtStart = true, serveEnv, beforeServe, afterServe: after, timeoutMs: _, ...projectOptions } = resolve();
      afterServe = after;
      model = await startScriptedModel(respond);
      const config = typeof opencodeConfig === "function" ? opencodeConfig(model.url) : opencodeConfig;
      project = createTestProject({ ...projectOptions, modelUrl: model.url, ...(config ? { opencodeConfig: config } : {}), ...(host ? { host } : {}) });
      await beforeServe?.(project, model);
      if (serveAtStart) await startServe({ env: typeof serveEnv === "function" ? serveEnv() : serveEnv });
    },
    typeof optsArg === "function" ? undefined : optsArg.timeoutMs,
  );
  afterAll(async () => {
    // Newest first; a server already stopped or crashed by its test stops at once.
    for (const s of servers.reverse()) await s.stop();
    await model?.close();
    await afterServe?.();
    project?.cleanup();
  });
  const m = lazy("the scripted model", () => model);
  const p = lazy("the test project", () => project);
  return {
    model: m,
    project: p,
    serve: lazy("opencode serve", () => servers.at(-1)),
    startServe,
    stepsOf: (id, from = 0) => m.requests.slice(from).filter((r) => r.kind === "agent" && r.sessionId === id),
    events: (type, sessionId) => auditEvents(p.governanceDir).filter((e) => e.type === type && (!sessionId || e.sessionId === sessionId)),
    cli: (...args) => projectCli(p, args),
  };
}

/**
 * Stands for the object `get` returns once the beforeAll made it: every property read, write and call goes to that
 * object (methods bound to it, so classes with private fields work), read anew each time (a restarted server swaps).
 */
export function lazy<T extends object>(what: string, get: () => T | undefined): T {
  const target = (): T => {
    const t = get();
    if (t === undefined) throw new Error(`${what} is used before the end-to-end beforeAll made it (or that beforeAll failed)`);
    return t;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const t = target();
      const value = Reflect.get(t, key, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
    set: (_, key, value) => Reflect.set(target(), key, value),
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(target(), key);
      return d ? { ...d, configurable: true } : undefined;
    },
  });
}
