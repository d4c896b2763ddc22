import fs from "node:fs";
import path from "node:path";
import { DEFAULT_CONFIG_YAML } from "../governance/config/config.ts";
import { ensureGovernanceDir, governancePaths } from "../governance/storage/governance-paths.ts";
import {
  addPluginToConfig,
  configCandidates,
  configFileToEdit,
  globalConfigDir,
  listsPlugin,
  newConfigText,
  readOpencodeConfig,
  type Scope,
} from "./opencode-config.ts";
import { PLUGIN_NAME, SCHEMA_FILE_NAME, packageRoot } from "./package-files.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

export type InitOptions = {
  /** Install for every project of this user: `$XDG_CONFIG_HOME/opencode/` (default `~/.config/opencode/`). */
  global?: boolean;
  /** Print what would change; write nothing. */
  dryRun?: boolean;
  /** Where `XDG_CONFIG_HOME` / `HOME` are read from (tests). */
  env?: NodeJS.ProcessEnv;
};

/** One planned change: what a user reads, and the write that does it. */
type Change = { say: string; apply: () => void | Promise<void> };

/**
 * Installs governance into an OpenCode project (or, with `global`, for the user): the plugin in OpenCode's config
 * (`"plugin": ["opencode-governance"]`, which OpenCode installs from the npm registry itself), the governed agents
 * and the OpenCode commands, and in a project the default `governance.yaml`, its JSON Schema and the git-ignored
 * state folder.
 *
 * Everything is planned before anything is written, so a config it cannot edit (broken JSONC, a `plugin` that is
 * not a list) stops it with nothing changed. The config is edited in place with jsonc-parser (comments, trailing
 * commas and layout kept); an existing `opencode.jsonc` is preferred over writing a second `opencode.json`. A file
 * the user has (an agent, a command, the YAML) is never overwritten; the schema is ours and refreshed. Running it
 * twice changes nothing the second time and says so.
 */
export async function runInit(dir: string, io: Io, options: InitOptions = {}): Promise<number> {
  const scope: Scope = options.global ? "global" : "project";
  const env = options.env ?? process.env;
  const base = scope === "global" ? globalConfigDir(env) : path.join(dir, ".opencode");
  const show = (file: string) => (scope === "project" ? path.relative(dir, file) : file);
  const changes: Change[] = [];
  const notes: string[] = [];

  const planned = planConfig(scope, dir, env, show);
  if (!planned.ok) {
    io.err(`${planned.reason}\nNothing was changed.`);
    return 1;
  }
  if (planned.change) changes.push(planned.change);
  if (planned.note) notes.push(planned.note);

  for (const kind of ["agent", "command"] as const) {
    const source = path.join(packageRoot(), kind === "agent" ? "agents" : "commands");
    const plan = planCopies(source, base, kind, show);
    changes.push(...plan.changes);
    notes.push(...plan.notes);
  }

  if (scope === "project") {
    const paths = governancePaths(dir);
    if (!fs.existsSync(paths.configFile)) {
      changes.push({ say: `write ${show(paths.configFile)} with the defaults`, apply: () => writeFile(paths.configFile, DEFAULT_CONFIG_YAML) });
    }
    const schemaSource = path.join(packageRoot(), "schema", SCHEMA_FILE_NAME);
    const schemaTarget = path.join(path.dirname(paths.configFile), SCHEMA_FILE_NAME);
    if (fs.existsSync(schemaSource) && !sameContent(schemaSource, schemaTarget)) {
      const verb = fs.existsSync(schemaTarget) ? "update" : "install";
      changes.push({
        say: `${verb} ${show(schemaTarget)} (editor completion and checks for governance.yaml)`,
        apply: () => copyFile(schemaSource, schemaTarget),
      });
    }
    if (!fs.existsSync(path.join(paths.root, ".gitignore"))) {
      changes.push({ say: `create the git-ignored state folder ${show(paths.root)}/`, apply: () => ensureGovernanceDir(paths) });
    }
  }

  for (const note of notes) io.out(note);
  if (changes.length === 0) {
    io.out(`nothing to change: governance is already installed ${scope === "global" ? `for this user (${base})` : `in ${dir}`}.`);
    return 0;
  }
  if (options.dryRun) {
    for (const c of changes) io.out(`would ${c.say}`);
    io.out(`dry run: ${changes.length} change(s) listed, nothing written.`);
    return 0;
  }
  for (const c of changes) {
    await c.apply();
    io.out(c.say.replace(/^(\w+)/, (verb) => PAST[verb] ?? verb));
  }
  io.out(
    scope === "global"
      ? "done. OpenCode now loads the plugin in every project; run `opencode-governance doctor` in a project after starting OpenCode there."
      : "done. Start OpenCode in this project, then run `opencode-governance doctor` to confirm the plugin loaded.",
  );
  return 0;
}

const PAST: Record<string, string> = { add: "added", write: "wrote", install: "installed", update: "updated", create: "created" };

type ConfigPlan = { ok: true; change?: Change; note?: string } | { ok: false; reason: string };

function planConfig(scope: Scope, dir: string, env: NodeJS.ProcessEnv, show: (f: string) => string): ConfigPlan {
  for (const file of configCandidates(scope, dir, env)) {
    if (!fs.existsSync(file)) continue;
    const read = readOpencodeConfig(file);
    if (read.ok && listsPlugin(read.value)) return { ok: true, note: `plugin already listed in ${show(file)}` };
  }
  const target = configFileToEdit(scope, dir, env);
  if (!target.exists) {
    return {
      ok: true,
      change: { say: `write ${show(target.file)} listing "${PLUGIN_NAME}" as a plugin`, apply: () => writeFile(target.file, newConfigText()) },
    };
  }
  const text = fs.readFileSync(target.file, "utf8");
  const edit = addPluginToConfig(text, show(target.file));
  if (!edit.ok) return { ok: false, reason: `cannot add "${PLUGIN_NAME}" to ${show(target.file)}: ${edit.reason}` };
  return { ok: true, change: { say: `add "${PLUGIN_NAME}" to the plugin list in ${show(target.file)}`, apply: () => writeFile(target.file, edit.text) } };
}

/**
 * Copies the package's markdown files (agents, commands) into OpenCode's folder for them (`agent/`, `command/`;
 * OpenCode also reads the plural folder names, so a same-named file there counts as present). A missing or empty
 * source folder installs nothing.
 */
function planCopies(source: string, base: string, kind: "agent" | "command", show: (f: string) => string): { changes: Change[]; notes: string[] } {
  const changes: Change[] = [];
  const notes: string[] = [];
  const files = fs.existsSync(source)
    ? fs
        .readdirSync(source)
        .filter((f) => f.endsWith(".md"))
        .sort()
    : [];
  for (const f of files) {
    const from = path.join(source, f);
    const existing = [path.join(base, kind, f), path.join(base, `${kind}s`, f)].find((p) => fs.existsSync(p));
    if (existing) {
      if (!sameContent(from, existing)) notes.push(`kept existing ${show(existing)} (yours differs from the shipped ${kind}; not overwritten)`);
      continue;
    }
    const to = path.join(base, kind, f);
    changes.push({ say: `install ${show(to)}`, apply: () => copyFile(from, to) });
  }
  return { changes, notes };
}

function sameContent(a: string, b: string): boolean {
  try {
    return fs.readFileSync(a).equals(fs.readFileSync(b));
  } catch {
    return false;
  }
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

function copyFile(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to);
}
