import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import plugin from "../../../plugin/index.ts";

export type Hooks = Record<string, (...args: unknown[]) => Promise<void>>;

/**
 * The whole plugin started in-process the way OpenCode 1 starts it (its `server` entry, no SDK client), over temp
 * projects: `project` writes one with its `.opencode/governance.yaml`, `start` sets the environment and returns the
 * hooks. After each test the projects are removed and `process.env` is as it was: the plugin reads OTEL_* and
 * XDG_CONFIG_HOME from it, as it does inside OpenCode.
 */
export function inProcessPlugin() {
  const dirs: string[] = [];
  const saved = { ...process.env };
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });
  return {
    project(prefix: string, yaml: string): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(dir);
      fs.mkdirSync(path.join(dir, ".opencode"), { recursive: true });
      fs.writeFileSync(path.join(dir, ".opencode", "governance.yaml"), yaml);
      return dir;
    },
    async start(dir: string, env: Record<string, string>): Promise<Hooks> {
      Object.assign(process.env, env);
      const input = { directory: dir, worktree: dir, client: {}, project: {}, serverUrl: new URL("http://127.0.0.1:1"), $: undefined };
      return (await plugin.server(input as never)) as unknown as Hooks;
    },
  };
}
