import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bwrapArgsFile, bwrapOptions, confinedCommand } from "../../governance/stop/sandbox-command.ts";
import { findBwrap, protectedSetFor } from "../../governance/stop/sandbox-probe.ts";
import { stats } from "./stats.ts";

/**
 * What confinement adds to one agent shell command (issue 41): `bash -c true` as OpenCode starts it, bare and as the
 * plugin rewrites it (bwrap with the protected set of a project and user folders laid out as a real install's), the
 * two interleaved so that the machine's load falls on both alike. Undefined without bwrap.
 */
export function confinementCost(runs: number): { bare: ReturnType<typeof stats>; confined: ReturnType<typeof stats>; mounts: number } | undefined {
  const bwrap = findBwrap();
  if (!bwrap) return undefined;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-bench-confine-"));
  try {
    const home = path.join(root, "home");
    const env = { HOME: home, PATH: process.env.PATH, XDG_STATE_HOME: path.join(home, ".local", "state"), XDG_CONFIG_HOME: path.join(home, ".config") };
    const project = path.join(root, "project");
    for (const d of [
      path.join(project, ".opencode", "governance"),
      path.join(env.XDG_STATE_HOME, "opencode-governance"),
      path.join(env.XDG_CONFIG_HOME, "opencode"),
    ])
      fs.mkdirSync(d, { recursive: true });
    const set = protectedSetFor(project, env, path.resolve(import.meta.dirname, "..", ".."));
    const options = bwrapOptions(set);
    const argsFile = path.join(root, "sandbox.args");
    fs.writeFileSync(argsFile, bwrapArgsFile(options));
    const confinedText = confinedCommand("true", bwrap, argsFile);
    const bare: number[] = [];
    const confined: number[] = [];
    const time = (command: string) => {
      const t0 = performance.now();
      execFileSync("bash", ["-c", command], { cwd: project, stdio: "ignore" });
      return performance.now() - t0;
    };
    for (let i = 0; i < 5; i++) time(confinedText);
    for (let i = 0; i < runs; i++) {
      bare.push(time("true"));
      confined.push(time(confinedText));
    }
    return {
      bare: stats(bare),
      confined: stats(confined),
      mounts: options.filter((o) => o.startsWith("--") && o !== "--die-with-parent" && o !== "--cap-drop").length,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
