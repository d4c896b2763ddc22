import { spawn, type ChildProcess } from "node:child_process";
import type { TestProject } from "./test-project.ts";
import { V2_SERVER_PASSWORD } from "./test-project.ts";
import { OpencodeHttp } from "./opencode-http.ts";
import { OpencodeV2Http } from "./opencode-2-http.ts";

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

/** Kills every opencode process this harness started (registered for process exit too). */
export function killAll(): void {
  for (const c of live) killGroup(c);
  live.clear();
}
process.once("exit", killAll);

export type RunResult = { code: number | null; stdout: string; stderr: string; ms: number };

/**
 * `opencode run …` in the project; resolves when it exits (killed after `timeoutMs`). On OpenCode 2 it is `run
 * --standalone`: a private server that ends with the command (plain `run` starts the shared background service,
 * `opencode serve --service`, which outlives it).
 */
export function runOpencode(project: TestProject, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const run = project.host.line === 2 ? ["run", "--standalone"] : ["run"];
    const child = spawn(project.host.bin, [...run, "--model", "scripted/scripted-model", ...args], {
      cwd: project.dir,
      env: { ...project.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    live.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => killGroup(child), opts.timeoutMs ?? 45_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

export type ServeHandle = {
  url: string;
  http: OpencodeHttp;
  logs(): string;
  /** SIGTERM to the process group (SIGKILL after 3 s); resolves with how `opencode serve` ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  /** kill -9 the whole process group: a crash, no cleanup by OpenCode or the plugin. */
  crash(): Promise<void>;
};

/** OpenCode 2's `serve`: its v2 API (`/api/…`) behind HTTP Basic auth (the project's OPENCODE_SERVER_PASSWORD). */
export type ServeHandle2 = Omit<ServeHandle, "http"> & { api: OpencodeV2Http };

/** `opencode serve` on a free port; resolves once it listens. */
export async function serveOpencode(project: TestProject, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeHandle> {
  if (project.host.line === 2) throw new Error("an OpenCode 2 project is served with serveOpencode2 (its v2 API)");
  const { url, ...rest } = await startServer(project, "INFO", opts.env);
  return { url, http: new OpencodeHttp(url, project.dir), ...rest };
}

/** `opencode serve` of an OpenCode 2 project, as its users start it: the v2 API with the server password set. */
export async function serveOpencode2(project: TestProject, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeHandle2> {
  if (project.host.line !== 2) throw new Error(`serveOpencode2 needs an OpenCode 2 project (this one is for OpenCode ${project.host.version})`);
  const { url, ...rest } = await startServer(project, "info", opts.env);
  return { url, api: new OpencodeV2Http(url, project.dir, V2_SERVER_PASSWORD), ...rest };
}

async function startServer(project: TestProject, logLevel: string, extraEnv: NodeJS.ProcessEnv | undefined): Promise<Omit<ServeHandle, "http">> {
  const child = spawn(project.host.bin, ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", logLevel], {
    cwd: project.dir,
    env: { ...project.env, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  live.add(child);
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`opencode serve did not listen in 30 s:\n${out}`)), 30_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("close", (code) => reject(new Error(`opencode serve exited (${code}):\n${out}`)));
  });
  return {
    url,
    logs: () => out,
    crash: async () => {
      killGroup(child, "SIGKILL");
      await new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on("close", () => resolve())));
      live.delete(child);
    },
    stop: async (signal = "SIGTERM") => {
      const started = Date.now();
      killGroup(child, signal);
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const t = setTimeout(() => {
          killGroup(child);
          resolve();
        }, 3_000);
        child.on("close", () => {
          clearTimeout(t);
          resolve();
        });
      });
      live.delete(child);
      return { code: child.exitCode, signal: child.signalCode, ms: Date.now() - started };
    },
  };
}
