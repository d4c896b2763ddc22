import path from "node:path";

/**
 * The one list of what a governed agent's processes and tools may not reach (issue 41): the shell sandbox
 * (sandbox-command.ts) mounts it, the file-tool check (`protectionOf`) refuses it — both from this function, so the two
 * can never disagree. Pure: paths in, entries out; whether a path exists is the caller's question (bwrap's `-try`
 * binds skip what is missing; the file check stats what it is asked about).
 *
 * - hidden: the per-user key's folder (`$XDG_STATE_HOME/opencode-governance`: the key that signs stops, guidance and
 *   raises). A sandboxed process sees an empty folder; a file tool may neither read nor write in it.
 * - read-only: the project's `.opencode/` as a whole (governance's records, queues, locks and audit log, the
 *   project's governance.yaml, and OpenCode's load points: `plugin/`, `plugins/`, agents, commands, its
 *   node_modules), the project's `opencode.json`/`opencode.jsonc` (their `plugin`/`plugins` lists; the whole file —
 *   docs/decisions/0035-confinement-by-bubblewrap.md), the user's OpenCode config folder (`$XDG_CONFIG_HOME/opencode`:
 *   the user's governance.yaml with its ceilings, the user's opencode.json(c), its plugin folders), the organisation's
 *   policy file, and the plugin's own code where it lies outside the project. Hidden too: the user's tmux sockets
 *   (a server outside the sandbox would run what it is sent unconfined).
 *
 * Why whole folders: a bind mount protects its own path, not the name above it; `mv .opencode x` would take the state
 * away from governance's next start. A mount point cannot be renamed (EBUSY), so the folder that holds governance's
 * files is itself the mount, and `ancestorsOf` pins the names above it.
 */
export type Protection = "hidden" | "read-only";
export type ProtectedWhy = "key" | "project-config" | "opencode-config" | "user-config" | "org-policy" | "plugin-code" | "session-server";
export type ProtectedPath = { path: string; mode: Protection; why: ProtectedWhy };

export type ProtectedInput = {
  /** The project OpenCode runs in (absolute). */
  projectDir: string;
  /** The key's folder: dirname of `keyFile()` (governance/storage/directive-signing.ts). */
  keyDir: string;
  /** `$XDG_CONFIG_HOME/opencode` (the folder of `userConfigFile()`, governance/config/user-config.ts). */
  userConfigDir: string;
  /** `orgPolicyFile()` (governance/config/org-policy.ts). */
  orgPolicyFile: string;
  /** The running plugin's package folder, when known. */
  pluginDir?: string;
  /**
   * The user's tmux socket folder (`$TMUX_TMPDIR/tmux-<uid>`): a tmux server started outside the sandbox (the user's
   * own) runs what it is sent unconfined, so its sockets are hidden; a tmux the command starts itself lives inside.
   */
  tmuxDir?: string;
};

const within = (file: string, dir: string) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

export function protectedSet(input: ProtectedInput): ProtectedPath[] {
  const project = path.resolve(input.projectDir);
  const set: ProtectedPath[] = [
    { path: path.resolve(input.keyDir), mode: "hidden", why: "key" },
    { path: path.join(project, ".opencode"), mode: "read-only", why: "project-config" },
    { path: path.join(project, "opencode.json"), mode: "read-only", why: "opencode-config" },
    { path: path.join(project, "opencode.jsonc"), mode: "read-only", why: "opencode-config" },
    { path: path.resolve(input.userConfigDir), mode: "read-only", why: "user-config" },
    { path: path.resolve(input.orgPolicyFile), mode: "read-only", why: "org-policy" },
  ];
  if (input.tmuxDir) set.push({ path: path.resolve(input.tmuxDir), mode: "hidden", why: "session-server" });
  // The plugin's code outside the project (an npm install in OpenCode's cache, a global path). Inside the project it
  // is the project's own code (this repository governing itself) or under `.opencode/` already.
  if (input.pluginDir && !within(project, path.resolve(input.pluginDir)) && !within(path.resolve(input.pluginDir), project))
    set.push({ path: path.resolve(input.pluginDir), mode: "read-only", why: "plugin-code" });
  // A path inside a hidden one needs no entry of its own; one inside a read-only one none either.
  return set.filter((e) => !set.some((o) => o !== e && o.path !== e.path && within(e.path, o.path) && (o.mode === "hidden" || e.mode === "read-only")));
}

/**
 * The folders above the protected paths, outermost first, `/` left out: each is bound onto itself (writable) in the
 * sandbox so that it becomes a mount point and cannot be renamed away with what it holds. A folder inside a protected
 * path is not listed (binding it writable would undo the protection), nor one `renameable` says no sandboxed process
 * can rename (every mount costs each shell command a little: docs/decisions/0055-fewer-pins.md).
 */
export function ancestorsOf(set: readonly ProtectedPath[], renameable: (dir: string) => boolean = () => true): string[] {
  const out = new Set<string>();
  for (const e of set) {
    let dir = path.dirname(e.path);
    const chain: string[] = [];
    while (dir !== path.dirname(dir)) {
      chain.unshift(dir);
      dir = path.dirname(dir);
    }
    for (const d of chain) if (!set.some((o) => within(d, o.path)) && renameable(d)) out.add(d);
  }
  return [...out].sort((a, b) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b));
}

/** A folder as `stat` gives it: owner and mode bits. */
export type FolderOwner = { uid: number; mode: number };

/**
 * Whether a process of `uid` without capabilities — every sandboxed one: `--cap-drop ALL` — can rename a folder whose
 * parent is `parent` (rename needs write permission on the parent, which the parent's owner can always give itself).
 * The group and other write bits count as "maybe" (the caller's groups are not asked; under POSIX ACLs the group bits
 * are the mask, the most any named entry grants). So the answer is no only for a parent of another user that grants
 * write to no one but its owner — `/`, `/home`, `/etc` for a user; for root, always yes. An unknown parent: yes.
 */
export function renameableUnder(parent: FolderOwner | undefined, uid: number): boolean {
  if (parent === undefined || uid === 0) return true;
  return parent.uid === uid || (parent.mode & 0o022) !== 0;
}

/** What a file tool does to its target: read it (or list, search under it) or change it. */
export type FileAccess = "read" | "write";

/**
 * The entry a file tool's target falls under, judged on its real path: `realTarget` is the realpath of the target, or
 * of its nearest existing parent joined with the rest (so a symlink, `..` or another spelling of the name lands where
 * the kernel would write), compared with the protected paths. `idOf` answers a path's identity (device and inode) for
 * a bind mount or a case-insensitive file system, where two spellings name one folder: the target and every folder
 * above it are compared with the entries by identity too. A hidden entry refuses both reads and writes; a read-only
 * one refuses writes. A read that searches a folder holding a hidden one (grep or glob over the home folder) is
 * refused too: it would read the key.
 */
export function protectionOf(
  realTarget: string,
  access: FileAccess,
  set: readonly ProtectedPath[],
  opts: { searches?: boolean; idOf?: (p: string) => string | undefined } = {},
): ProtectedPath | undefined {
  const relevant = set.filter((e) => access === "write" || e.mode === "hidden");
  const byPath = relevant.find((e) => within(realTarget, e.path) || (opts.searches === true && e.mode === "hidden" && within(e.path, realTarget)));
  if (byPath || !opts.idOf) return byPath;
  const ids = new Map<string, ProtectedPath>();
  for (const e of relevant) {
    const id = opts.idOf(e.path);
    if (id !== undefined) ids.set(id, e);
  }
  if (ids.size === 0) return undefined;
  for (const dir of ancestorsOfPath(realTarget)) {
    const id = opts.idOf(dir);
    const hit = id === undefined ? undefined : ids.get(id);
    if (hit) return hit;
  }
  return undefined;
}

/** `p` and every folder above it. */
function ancestorsOfPath(p: string): string[] {
  const out: string[] = [];
  for (let dir = p; ; dir = path.dirname(dir)) {
    out.push(dir);
    if (dir === path.dirname(dir)) return out;
  }
}
