import path from "node:path";

/**
 * Governance's control surfaces, as a governed session's tool call could name them (issue 27): the per-user key
 * (`$XDG_STATE_HOME/opencode-governance/queue-key`, which signs stops, guidance and raises), the project's state
 * folder and config (`.opencode/governance/` records, queues, locks, audit log; `.opencode/governance.yaml`), and the
 * CLI's commands that act (`stop`, `inject`, `budget`, `dashboard`). Pure: built once from paths known at start,
 * then asked on every tool call in O(length of the arguments) — no file I/O (symlinks and obfuscated names are
 * left to the later layers: key redaction, record reconciliation; docs/security.md "Agent tools and the control
 * surfaces").
 */
export type SurfaceKind = "key" | "state" | "cli";

export type ControlSurfaces = {
  /** Lower-case substrings that name the key or its folder. */
  key: readonly string[];
  /** Lower-case substrings that name the project's state folder or its config file. */
  state: readonly string[];
  /** Absolute folders (resolved, and their real paths as seen at start) a path argument must not lie in. */
  keyDirs: readonly string[];
  stateDirs: readonly string[];
  projectDir: string;
};

/** `changes`: a shell command that would change the named surface (what is still refused inside the sandbox). */
export type SurfaceHit = { surface: SurfaceKind; named: string; changes?: true };

/** `keyDir`: the key's folder; `stateDir`: `.opencode/governance`; `realPaths`: the same resolved through symlinks (at start). */
export function controlSurfaces(opts: { projectDir: string; keyDir: string; stateDir: string; configFile: string; realPaths?: string[] }): ControlSurfaces {
  const low = (s: string) => s.toLowerCase();
  const real = opts.realPaths ?? [];
  return {
    key: [
      low(opts.keyDir),
      "queue-key",
      ".local/state/opencode-governance",
      "xdg_state_home",
      ...real.filter((p) => p.endsWith("opencode-governance")).map(low),
    ],
    state: [
      low(opts.stateDir),
      low(opts.configFile),
      ".opencode/governance",
      "governance/sessions/",
      "governance/queues/",
      ...real.filter((p) => !p.endsWith("opencode-governance")).map(low),
    ],
    keyDirs: [opts.keyDir, ...real.filter((p) => p.endsWith("opencode-governance"))],
    stateDirs: [opts.stateDir, opts.configFile, ...real.filter((p) => !p.endsWith("opencode-governance"))],
    projectDir: opts.projectDir,
  };
}

/** Tools that run a command (OpenCode 1 `bash`, OpenCode 2 `shell`): every surface counts, the CLI included. */
const SHELL_TOOLS = new Set(["bash", "shell"]);
/** Tools that change files: the state folder and config may not be their target. */
const WRITE_TOOLS = new Set(["write", "edit", "multiedit", "patch", "apply_patch"]);
/** Argument names that hold a path (OpenCode's built-in tools). */
const PATH_ARGS = ["filePath", "path", "file", "filepath", "directory", "workdir", "cwd"];
/** The CLI's commands that act on sessions (read-only ones — sessions, status, log, budget without --add — are harmless but share the name). */
const CLI_NAME = /opencode-governance|cli\/main\.js/;
const CLI_ACTION = /\b(stop|inject|budget|dashboard)\b/;
/** apply_patch's file headers (`*** Update File: a/b.ts`, `*** Move to: …`). */
const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;
/** Arguments longer than this are scanned only this far (a write's content is not a path; 64 KiB covers any command). */
const MAX_SCAN = 65_536;

function firstHit(text: string, needles: readonly string[]): string | undefined {
  const low = text.length > MAX_SCAN ? text.slice(0, MAX_SCAN).toLowerCase() : text.toLowerCase();
  return needles.find((n) => n.length > 0 && low.includes(n));
}

function inside(file: string, dirs: readonly string[]): string | undefined {
  return dirs.find((d) => file === d || file.startsWith(d.endsWith(path.sep) ? d : d + path.sep));
}

/** A path argument resolved against the project (lexically: `..` and relative paths, not symlinks). */
function pathHit(raw: string, s: ControlSurfaces, withState: boolean): SurfaceHit | undefined {
  const text = raw.startsWith("~/") ? raw.slice(1) : raw;
  const named = firstHit(text, s.key);
  if (named) return { surface: "key", named };
  const resolved = path.resolve(s.projectDir, raw);
  const keyDir = inside(resolved, s.keyDirs);
  if (keyDir) return { surface: "key", named: keyDir };
  if (!withState) return undefined;
  const stateNamed = firstHit(text, s.state);
  if (stateNamed) return { surface: "state", named: stateNamed };
  const stateDir = inside(resolved, s.stateDirs);
  return stateDir ? { surface: "state", named: stateDir } : undefined;
}

/** Shell words that change a file they name (a copy's source is read, so `cp`/`tee` are left to the sandbox). */
const CHANGE_VERB = /(?:^|[\s;&|(`])(?:rm|rmdir|mv|touch|truncate|chmod|chown|ln|mkdir|unlink|shred|(?:sed|perl)\s+(?:-\S+\s+)*-i\S*)\s/;
/** An output redirection and its target (`> f`, `>> f`, `&> f`, `1> "f"`; not `2>&1`). */
const REDIRECT = />>?\|?\s*(?!&)(["']?)([^\s;&|<>"']+)\1/g;

/**
 * Whether a shell command naming the state folder or config would change it, as far as its words show: a change verb
 * (`rm`, `mv`, `sed -i` …), or an output redirection into it. A recogniser, not a boundary — inside the sandbox the
 * folder is read-only whatever the words (decision 0053); this only lets the agent read a clear refusal first.
 */
function changesState(command: string, s: ControlSurfaces): boolean {
  const head = command.length > MAX_SCAN ? command.slice(0, MAX_SCAN) : command;
  if (CHANGE_VERB.test(head)) return true;
  for (const m of head.matchAll(REDIRECT)) if (firstHit(m[2]!, s.state) || inside(path.resolve(s.projectDir, m[2]!), s.stateDirs)) return true;
  return false;
}

/**
 * Which control surface a tool call names, if any. A command (`bash`): the key, the state folder or config, or the
 * CLI with an acting command. A file-changing tool: a target path in the key's folder or the state folder/config.
 * Any other tool: a path argument (or, for tools governance does not know, any top-level string) naming the key.
 * Reading the state folder is allowed (records carry no secret); reading the key is not.
 *
 * `confined`: this command will run in the OS sandbox (decision 0035), where the key's folder is empty and the state
 * folder and config are read-only. Naming them is then harmless, and refusing a read (`ls "$XDG_STATE_HOME"`, `cat
 * .opencode/governance.yaml`) was the newcomer's first refusal (decision 0053): only the CLI's acting commands and a
 * command that would change the state folder or config are refused, early, with a text that says why.
 */
export function surfaceNamed(
  tool: string,
  args: Record<string, unknown> | undefined,
  s: ControlSurfaces,
  opts: { confined?: boolean } = {},
): SurfaceHit | undefined {
  if (!args) return undefined;
  if (SHELL_TOOLS.has(tool)) {
    for (const value of Object.values(args)) {
      if (typeof value !== "string") continue;
      const key = opts.confined ? undefined : firstHit(value, s.key);
      if (key) return { surface: "key", named: key };
      const state = firstHit(value, s.state);
      if (state && !opts.confined) return { surface: "state", named: state };
      if (state && changesState(value, s)) return { surface: "state", named: state, changes: true };
      const head = value.length > MAX_SCAN ? value.slice(0, MAX_SCAN) : value;
      const cli = CLI_NAME.exec(head);
      if (cli && CLI_ACTION.test(head)) return { surface: "cli", named: cli[0] };
    }
    return undefined;
  }
  const writes = WRITE_TOOLS.has(tool);
  for (const name of PATH_ARGS) {
    const value = args[name];
    if (typeof value !== "string") continue;
    const hit = pathHit(value, s, writes);
    if (hit) return hit;
  }
  if (writes) {
    for (const value of Object.values(args)) {
      if (typeof value !== "string" || !value.includes("*** ")) continue;
      for (const m of value.slice(0, MAX_SCAN).matchAll(PATCH_FILE)) {
        const hit = pathHit(m[1]!.trim(), s, true);
        if (hit) return hit;
      }
    }
    return undefined;
  }
  // read, grep, glob, list, webfetch, MCP tools …: any string argument that names the key.
  for (const value of Object.values(args)) {
    if (typeof value !== "string") continue;
    const key = firstHit(value, s.key);
    if (key) return { surface: "key", named: key };
  }
  return undefined;
}

/** What the refused model reads: what it named, and what to do instead. */
export function surfaceRefusal(hit: SurfaceHit, who: { agent: string | null; subagent: boolean }): string {
  const what =
    hit.surface === "key"
      ? "governance's signing key (it authorises stops, guidance and budget raises)"
      : hit.surface === "state"
        ? "governance's state folder or config (.opencode/governance/, .opencode/governance.yaml: records, queues, locks, limits)"
        : "the governance CLI's stop/inject/budget/dashboard commands";
  const role = who.subagent ? `${who.agent ?? "this agent"} is a subagent` : `${who.agent ?? "this agent"} runs under its user's governance`;
  const instead = who.subagent ? "Finish your task and report to your parent instead." : "Ask the user to do it with the CLI or the dashboard.";
  if (hit.changes)
    return `Refused by governance: this command would change ${what}. Agent commands may read it but not change it (it is read-only for them) — only the user can. ${instead} (audited)`;
  return `Refused by governance: this call names ${what}. ${role}: it may not stop, steer, raise budgets for, or read the key of any session through its tools — only the user can. ${instead} (audited)`;
}
