import fs from "node:fs";
import path from "node:path";
import { readOpencodeAgents } from "../governance/config/opencode-agents.ts";
import { agentsToName, deriveAgentPolicy, generatedConfigYaml } from "../governance/config/project-agents.ts";
import { describeTargets } from "../governance/text-safety/text-parts.ts";
import { cleanLine } from "../governance/text-safety/untrusted-text.ts";
import { ensureGovernanceDir, governancePaths } from "../governance/storage/governance-paths.ts";
import {
  addPluginToConfig,
  configCandidates,
  configFileToEdit,
  globalConfigDir,
  listedUnder,
  newConfigText,
  raiseNumberInConfig,
  readOpencodeConfig,
  type Scope,
} from "./opencode-config.ts";
import { depthKeyToWrite, hostDepthNeeded } from "../governance/host/host-lines.ts";
import { readConfig } from "./read-config.ts";
import { type DetectedHost, detectHost, pluginKeyOf } from "./opencode-host.ts";
import { PLUGIN_NAME, SCHEMA_FILE_NAME, packageRoot } from "./package-files.ts";
import { planLocalPlugin, projectInstall } from "./local-install.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

export type InitOptions = {
  /** Install for every project of this user: `$XDG_CONFIG_HOME/opencode/` (default `~/.config/opencode/`). */
  global?: boolean;
  /** Print what would change; write nothing. */
  dryRun?: boolean;
  /** Where `XDG_CONFIG_HOME` / `HOME` are read from (tests). */
  env?: NodeJS.ProcessEnv;
  /** The OpenCode line to write for, instead of detecting it (`--host 1|2`). */
  host?: DetectedHost;
};

/** One planned change: what a user reads, and the write that does it. */
type Change = { say: string; apply: () => void | Promise<void> };

/**
 * Installs governance into an OpenCode project (or, with `global`, for the user): the plugin in OpenCode's config
 * (`"plugin": ["opencode-governance"]`, which OpenCode installs from the npm registry itself; when the package is
 * installed in the project's node_modules, a local plugin file that loads that copy: cli/local-install.ts), the governed agents
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

  const host = options.host ?? detectHost(dir, env);
  notes.push(`OpenCode ${host.line}${host.version ? ` (${host.version})` : ""}: ${host.how}; plugins go under "${pluginKeyOf(host.line)}".`);
  const maxDepth = (await readConfig(governancePaths(dir).configFile)).config.delegation.maxDepth;
  // Installed in the project's node_modules: OpenCode loads that copy, never the registry (decision 0031).
  const local = scope === "project" ? projectInstall(dir) : undefined;
  const planned = local ? planLocalPlugin(dir, env, show, host, maxDepth, local) : planConfig(scope, dir, env, show, host, maxDepth);
  if (!planned.ok) {
    io.err(`${planned.reason}\nNothing was changed.`);
    return 1;
  }
  changes.push(...planned.changes);
  if ("notes" in planned) notes.push(...planned.notes);
  else if (planned.note) notes.push(planned.note);

  for (const kind of ["agent", "command"] as const) {
    const source = path.join(packageRoot(), kind === "agent" ? "agents" : "commands");
    const plan = planCopies(source, base, kind, show);
    changes.push(...plan.changes);
    notes.push(...plan.notes);
  }

  if (scope === "project") {
    const paths = governancePaths(dir);
    if (!fs.existsSync(paths.configFile)) {
      // The project's own agents keep the roles OpenCode gives them (docs/decisions/0030-project-agents-named.md).
      const agents = await readOpencodeAgents(dir, env);
      const named = agentsToName(agents).map(deriveAgentPolicy);
      const roles = named.map(
        (d) => `\n  ${cleanLine(`${d.name}: ${d.policy.role} → ${describeTargets(d.policy.mayDelegateTo)} (from ${d.source}: ${d.settings})`, 200)}`,
      );
      changes.push({
        say: `write ${show(paths.configFile)} with the defaults${named.length > 0 ? `, naming the project's own agents with the roles OpenCode's settings give them:${roles.join("")}` : ""}`,
        apply: () => writeFile(paths.configFile, generatedConfigYaml(agents)),
      });
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

const PAST: Record<string, string> = { add: "added", write: "wrote", install: "installed", update: "updated", create: "created", remove: "removed" };

type ConfigPlan = { ok: true; changes: Change[]; note?: string } | { ok: false; reason: string };

/**
 * The plugin entry under the host's key (`plugin` for OpenCode 1, `plugins` for OpenCode 2), and for OpenCode 2 its
 * own subagent depth limit (`experimental.subagent_depth`, default 1) raised to governance's max depth + 1: OpenCode 2
 * has no `config` hook through which the plugin could raise it itself, as it does on OpenCode 1.
 */
function planConfig(scope: Scope, dir: string, env: NodeJS.ProcessEnv, show: (f: string) => string, host: DetectedHost, maxDepth: number): ConfigPlan {
  const key = pluginKeyOf(host.line);
  const changes: Change[] = [];
  const depth = (file: string, text: string): Change | undefined => {
    const at = depthKeyToWrite(host.line);
    if (!at) return undefined;
    const raised = raiseNumberInConfig(text, at, hostDepthNeeded(maxDepth));
    if (raised === undefined) return undefined;
    return {
      say: `set ${at.join(".")} to ${hostDepthNeeded(maxDepth)} in ${show(file)} (OpenCode 2's own subagent limit; governance decides within it)`,
      apply: () => writeFile(file, raised),
    };
  };
  for (const file of configCandidates(scope, dir, env)) {
    if (!fs.existsSync(file)) continue;
    const read = readOpencodeConfig(file);
    if (read.ok && listedUnder(read.value).includes(key)) {
      const d = depth(file, read.text);
      return { ok: true, changes: d ? [d] : [], note: `plugin already listed in ${show(file)}` };
    }
  }
  const target = configFileToEdit(scope, dir, env);
  if (!target.exists) {
    const text = newConfigText(key);
    const at = depthKeyToWrite(host.line);
    const full = at ? (raiseNumberInConfig(text, at, hostDepthNeeded(maxDepth)) ?? text) : text;
    changes.push({ say: `write ${show(target.file)} listing "${PLUGIN_NAME}" under "${key}"`, apply: () => writeFile(target.file, full) });
    return { ok: true, changes };
  }
  const text = fs.readFileSync(target.file, "utf8");
  const edit = addPluginToConfig(text, show(target.file), key);
  if (!edit.ok) return { ok: false, reason: `cannot add "${PLUGIN_NAME}" to ${show(target.file)}: ${edit.reason}` };
  const at = depthKeyToWrite(host.line);
  const after = at ? (raiseNumberInConfig(edit.text, at, hostDepthNeeded(maxDepth)) ?? edit.text) : edit.text;
  changes.push({
    say: `add "${PLUGIN_NAME}" to the ${key} list in ${show(target.file)}${at && after !== edit.text ? ` and set ${at.join(".")} to ${hostDepthNeeded(maxDepth)}` : ""}`,
    apply: () => writeFile(target.file, after),
  });
  return { ok: true, changes };
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
