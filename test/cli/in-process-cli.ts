import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { main } from "../../cli/main.ts";

export type CliRun = { code: number; out: string; err: string };

const KEYS = ["XDG_CONFIG_HOME", "XDG_CACHE_HOME", "OPENCODE_BIN", "OPENCODE_CONFIG"] as const;

/**
 * The CLI run in this process (`main`, for `init` and `doctor`, which read the user's folders) on a fresh temp project
 * for each test: `root` holds the empty project folder `dir` and the user's XDG folders, OPENCODE_BIN names no binary
 * until a test sets one, OPENCODE_CONFIG is unset; both handed to `use` before the test, the folder removed and the
 * environment restored after it. Returns the runner: `cli("init", "--dry-run")` on that project.
 */
export function inProcessCliEach(prefix: string, use: (root: string, dir: string) => void): (...args: string[]) => Promise<CliRun> {
  const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  let dir = "";
  let root = "";
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dir = path.join(root, "project");
    fs.mkdirSync(dir);
    process.env.XDG_CONFIG_HOME = path.join(root, "xdg-config");
    process.env.XDG_CACHE_HOME = path.join(root, "xdg-cache");
    process.env.OPENCODE_BIN = path.join(root, "no-opencode-here");
    delete process.env.OPENCODE_CONFIG;
    use(root, dir);
  });
  afterEach(() => {
    for (const k of KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    fs.rmSync(root, { recursive: true, force: true });
  });
  return async (...args) => {
    let out = "";
    let err = "";
    const code = await main([...args, "--dir", dir], { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) });
    return { code, out, err };
  };
}

/** `main(args… --dir dir)` in this process, for a project a file set up once: its standard output; a failing exit fails the test. */
export async function cliOut(dir: string, ...args: string[]): Promise<string> {
  let out = "";
  const code = await main([...args, "--dir", dir], { out: (s) => (out += `${s}\n`), err: () => undefined });
  expect(code).toBe(0);
  return out;
}
