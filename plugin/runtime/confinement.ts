import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { keyFile } from "../../governance/storage/directive-signing.ts";
import { fileTargets } from "../../governance/stop/file-targets.ts";
import { type ProtectedPath, protectionOf } from "../../governance/stop/protected-set.ts";
import { folderRenameable, probeSandbox, protectedSetFor } from "../../governance/stop/sandbox-probe.ts";
import { argsFileName, bwrapArgsFile, bwrapOptions, confinedCommand } from "../../governance/stop/sandbox-command.ts";

/**
 * Confinement by the operating system, the I/O half (issue 41; the rules are governance/stop/protected-set.ts and
 * sandbox-command.ts): where bwrap is, whether it can run here (a probe), the options file it reads, and the real-path
 * check of OpenCode's in-process file tools. One per plugin instance; nothing runs until the first shell command or
 * file tool asks (a plugin instance that never runs one costs nothing).
 */
export type SandboxState = { ok: true; bwrap: string; argsFile: string } | { ok: false; why: string };

/** The package folder this code was loaded from: dist/plugin/<chunk>.js and plugin/runtime/<file>.ts are both two levels down. */
export function pluginPackageDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
}

export class Confinement {
  readonly set: ProtectedPath[];
  /** `confinement_unavailable` was audited and toasted by this instance (once: plugin/hooks/confine.ts). */
  reported = false;
  #state: Promise<SandboxState> | undefined;
  #known: SandboxState | undefined;
  readonly #env: NodeJS.ProcessEnv;

  constructor(projectDir: string, env: NodeJS.ProcessEnv = process.env) {
    this.#env = env;
    this.set = protectedSetFor(projectDir, env, pluginPackageDir());
  }

  /** The sandbox as known now (undefined until the probe answered once). */
  get known(): SandboxState | undefined {
    return this.#known;
  }

  /** Whether a sandbox can run, found once per instance: bwrap on PATH, the probe, the options file in the key's folder. */
  sandbox(): Promise<SandboxState> {
    this.#state ??= this.#prepare().then((s) => {
      this.#known = s;
      return s;
    });
    return this.#state;
  }

  async #prepare(): Promise<SandboxState> {
    const hidden = this.set.filter((e) => e.mode === "hidden");
    // bwrap mounts the tmpfs on an existing folder only (it would create the key's folder otherwise, as the key does).
    for (const e of hidden) fs.mkdirSync(e.path, { recursive: true, mode: 0o700 });
    // The key's folder is the first hidden entry (protectedSet's order).
    // The pins a sandboxed process could undo, read once for the probe and the options file alike.
    const renameable = folderRenameable();
    const probe = await probeSandbox(this.set, this.#env, renameable);
    if (!probe.ok) return probe;
    const options = bwrapOptions(this.set, renameable);
    const text = bwrapArgsFile(options);
    const keyDir = hidden[0]?.path ?? path.dirname(keyFile(this.#env));
    const argsFile = path.join(keyDir, argsFileName(text));
    writePrivate(argsFile, text);
    return { ok: true, bwrap: probe.bwrap, argsFile };
  }

  /** The agent's command, confined; `state` must be an available sandbox. */
  wrap(command: string, state: Extract<SandboxState, { ok: true }>): string {
    return confinedCommand(command, state.bwrap, state.argsFile);
  }

  /** The protected entry a file tool's call would reach, by real path and identity; undefined when it may run. */
  fileToolHit(tool: string, args: Record<string, unknown> | undefined, cwd: string): ProtectedPath | undefined {
    const targets = fileTargets(tool, args);
    if (!targets) return undefined;
    const ids = new Map<string, string | undefined>();
    const idOf = (p: string) => {
      if (!ids.has(p)) ids.set(p, identity(p));
      return ids.get(p);
    };
    for (const raw of targets.paths) {
      const hit = protectionOf(realTarget(path.resolve(cwd, expandHome(raw, this.#env))), targets.access, this.set, { searches: targets.searches, idOf });
      if (hit) return hit;
    }
    return undefined;
  }
}

function expandHome(p: string, env: NodeJS.ProcessEnv): string {
  return p === "~" || p.startsWith("~/") ? path.join(env.HOME ?? "", p.slice(1)) : p;
}

/** Device and inode: one folder under two names (a bind mount, another case on a case-insensitive file system) is one. */
function identity(p: string): string | undefined {
  try {
    const st = fs.statSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * Where the kernel would act: the realpath of the target, or of its nearest existing parent with the rest joined on
 * (a file not written yet, under a symlinked folder, lands where the link points).
 */
export function realTarget(absolute: string): string {
  let rest = "";
  for (let dir = absolute; ; dir = path.dirname(dir)) {
    try {
      const real = fs.realpathSync.native(dir);
      return rest ? path.join(real, rest) : real;
    } catch {
      if (dir === path.dirname(dir)) return absolute;
      rest = rest ? path.join(path.basename(dir), rest) : path.basename(dir);
    }
  }
}

/** Written under a temp name and renamed into place, owner-only; an existing file with the same (hashed) name is the same text. */
function writePrivate(file: string, text: string): void {
  try {
    if (fs.readFileSync(file, "utf8") === text) return;
  } catch {
    // absent: written below
  }
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, text, { mode: 0o600, flag: "w" });
  fs.renameSync(temp, file);
}
