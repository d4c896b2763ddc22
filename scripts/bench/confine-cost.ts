import { bashEntryScript } from "../../plugin/runtime/shell-entry.ts";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { bwrapArgsFile, bwrapOptions, confinedCommand } from "../../governance/stop/sandbox-command.ts";
import { findBwrap, folderRenameable, protectedSetFor } from "../../governance/stop/sandbox-probe.ts";
import { type Stats, stats } from "./stats.ts";

/**
 * What confinement adds to one agent shell command (issue 41): `bash -c true` as OpenCode starts it, bare and as the
 * plugin rewrites it (bwrap with the protected set of a project and user folders laid out as a real install's), and
 * the steps in between, so that the cost can be split: the wrapped shell (the `"$0" -c` bwrap runs), bwrap's own
 * start-up (a process, its namespace, `--dev-bind / /`, `--die-with-parent`, `--cap-drop`), the protected entries'
 * mounts, and the pins of the folders above them — the last two are what governance chooses. `allPins` is every folder
 * above (before docs/decisions/0055-fewer-pins.md), `confined` the pins the plugin now writes: only folders a
 * sandboxed process could rename. Run as root, the commands run as `nobody` (setpriv), in a home folder of its own
 * under a root-owned one, as a user's would: bwrap unprivileged (a user namespace), the user's own pins.
 *
 * Each figure is per command, from blocks of `BLOCK` commands run by one bash loop: wall time of the block, and CPU
 * of the commands (bash's `times`: user + system of its reaped children, getrusage). CPU hardly moves with the machine's
 * load, wall does (every process start waits for a core); the variants' blocks are interleaved so that the load falls
 * on all alike. Undefined without bwrap.
 */
export type Step = "bare" | "shell" | "bwrap" | "entries" | "allPins" | "confined" | "bashEnv";
export type ConfineCost = { user: string; entries: number; allPins: number; pins: number; wall: Record<Step, Stats>; cpu: Record<Step, Stats> };

const BLOCK = 10;
const NOBODY = 65534;

export function confinementCost(commands: number): ConfineCost | undefined {
  const bwrap = findBwrap();
  if (!bwrap) return undefined;
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ocg-bench-confine-")));
  const asNobody = process.getuid?.() === 0 && spawnSync("setpriv", ["--help"]).status === 0;
  const uid = asNobody ? NOBODY : (process.getuid?.() ?? 0);
  try {
    fs.chmodSync(root, 0o755);
    const home = path.join(root, "home");
    const env = {
      HOME: home,
      PATH: process.env.PATH,
      XDG_STATE_HOME: path.join(home, ".local", "state"),
      XDG_CONFIG_HOME: path.join(home, ".config"),
      TMUX_TMPDIR: root,
    };
    const project = path.join(home, "src", "project");
    const pluginDir = path.join(home, ".cache", "opencode", "node_modules", "opencode-governance");
    for (const d of [
      path.join(project, ".opencode", "governance"),
      path.join(env.XDG_STATE_HOME, "opencode-governance"),
      path.join(env.XDG_CONFIG_HOME, "opencode"),
      pluginDir,
    ])
      fs.mkdirSync(d, { recursive: true });
    const set = protectedSetFor(project, env, pluginDir);
    for (const e of set.filter((x) => x.mode === "hidden")) fs.mkdirSync(e.path, { recursive: true, mode: 0o700 });
    if (asNobody) execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, home, ...set.filter((x) => x.path.startsWith(`${root}/tmux-`)).map((x) => x.path)]);
    const before = bwrapOptions(set);
    const options = bwrapOptions(set, folderRenameable(uid));
    const fixed = ["--dev-bind", "/", "/", "--die-with-parent", "--cap-drop", "ALL"];
    // The same options without the pins (`--bind-try dir dir` of every folder above a protected path).
    const entries = before.filter((_, i) => before[i] !== "--bind-try" && before[i - 1] !== "--bind-try" && before[i - 2] !== "--bind-try");
    const argsFile = (name: string, o: string[]) => {
      const file = path.join(root, `${name}.args`);
      fs.writeFileSync(file, bwrapArgsFile(o));
      return file;
    };
    const commandsOf: Record<Step, string> = {
      bare: "true",
      shell: 'exec "$0" -c true',
      bwrap: confinedCommand("true", bwrap, argsFile("bwrap", fixed)),
      entries: confinedCommand("true", bwrap, argsFile("entries", entries)),
      allPins: confinedCommand("true", bwrap, argsFile("all-pins", before)),
      confined: confinedCommand("true", bwrap, argsFile("confined", options)),
      // The route a bash command takes since decision 0071: the text stays `true`; the shell OpenCode starts reads
      // BASH_ENV (the entry script), which execs bwrap with the same options on the same command.
      bashEnv: "true",
    };
    const entryScript = path.join(root, "entry.bash-env");
    fs.writeFileSync(entryScript, bashEntryScript(bwrap, argsFile("bash-env", options)), { mode: 0o644 });
    const envOf: Partial<Record<Step, string>> = { bashEnv: `BASH_ENV=${entryScript} SHLVL=1 ` };
    const steps = Object.keys(commandsOf) as Step[];
    const wall = Object.fromEntries(steps.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
    const cpu = Object.fromEntries(steps.map((s) => [s, [] as number[]])) as Record<Step, number[]>;
    const block = (command: string, prefix = "") => {
      const loop = `for i in $(seq ${BLOCK}); do ${prefix}bash -c "$1"; done; times`;
      const t0 = performance.now();
      const as = asNobody ? ["setpriv", "--reuid", String(NOBODY), "--regid", String(NOBODY), "--clear-groups"] : [];
      const argv = [...as, "bash", "-c", loop, "bench", command];
      const out = execFileSync(argv[0]!, argv.slice(1), { cwd: project, stdio: ["ignore", "pipe", "ignore"] }).toString();
      const ms = performance.now() - t0;
      // `times`: the shell's own user/system, then its children's ("0m0.012s 0m0.020s").
      const children = out.trim().split("\n").at(-1) ?? "";
      const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((n, m) => n + Number(m[1]) * 60 + Number(m[2]), 0);
      return { wall: ms / BLOCK, cpu: (seconds * 1000) / BLOCK };
    };
    for (const s of steps) block(commandsOf[s], envOf[s]);
    for (let b = 0; b < Math.max(1, Math.round(commands / BLOCK)); b++) {
      for (const s of b % 2 === 0 ? steps : [...steps].reverse()) {
        const r = block(commandsOf[s], envOf[s]);
        wall[s].push(r.wall);
        cpu[s].push(r.cpu);
      }
    }
    const of = (m: Record<Step, number[]>) => Object.fromEntries(steps.map((s) => [s, stats(m[s])])) as Record<Step, Stats>;
    const pins = (o: string[]) => o.filter((x) => x === "--bind-try").length;
    return {
      user: asNobody ? `uid ${NOBODY} (nobody, via setpriv)` : `uid ${uid}`,
      entries: entries.filter((o) => o === "--ro-bind-try" || o === "--tmpfs").length,
      allPins: pins(before),
      pins: pins(options),
      wall: of(wall),
      cpu: of(cpu),
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
