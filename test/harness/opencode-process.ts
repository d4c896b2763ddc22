import { spawn, type ChildProcess } from "node:child_process";
import { OPENCODE_BIN } from "./paths.ts";
import type { TestProject } from "./test-project.ts";
import { OpencodeHttp } from "./opencode-http.ts";

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

/** `opencode run …` in the project; resolves when it exits (killed after `timeoutMs`). */
export function runOpencode(project: TestProject, args: string[], opts: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(OPENCODE_BIN, ["run", "--model", "scripted/scripted-model", ...args], {
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

/** `opencode serve` on a free port; resolves once it listens. */
export async function serveOpencode(project: TestProject, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<ServeHandle> {
  const child = spawn(OPENCODE_BIN, ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", "INFO"], {
    cwd: project.dir,
    env: { ...project.env, ...opts.env },
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
    http: new OpencodeHttp(url, project.dir),
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
