import fs from "node:fs";
import path from "node:path";
import { depthKeyToWrite, hostDepthNeeded } from "../governance/host/host-lines.ts";
import type { DetectedHost } from "./opencode-host.ts";
import {
  configCandidates,
  configFileToEdit,
  listedUnder,
  type PluginKey,
  raiseNumberInConfig,
  readOpencodeConfig,
  removePluginByName,
} from "./opencode-config.ts";
import { PLUGIN_NAME } from "./package-files.ts";

/**
 * The install route that needs no registry (docs/decisions/0031-install-without-registry.md): when the package is
 * installed in the project's own node_modules (from a tarball, a path or a registry), OpenCode loads THAT copy through
 * a one-line local plugin file, instead of listing the package by name, which makes OpenCode fetch it from the
 * registry into its cache (and fail silently when the registry does not have it).
 *
 * The file lives in `.opencode/plugins/`: OpenCode 1 (1.18.33) and OpenCode 2 (2.0.15) both load a `.js` file there.
 * It re-exports the package by name, so the host resolves it from the project's node_modules at each start and an
 * `npm install` of a newer tarball is what the next start loads.
 */
export const LOCAL_PLUGIN_FILE = path.join(".opencode", "plugins", `${PLUGIN_NAME}.js`);

export const LOCAL_PLUGIN_TEXT = [
  `// Written by \`${PLUGIN_NAME} init\`: OpenCode loads the copy of ${PLUGIN_NAME} installed in this project's`,
  "// node_modules (no registry needed; `npm install` updates it). Remove this file to uninstall the plugin.",
  `export { default } from "${PLUGIN_NAME}";`,
  "",
].join("\n");

/** The copy installed in the project: its version and, when package.json names it, the spec it came from. */
export type ProjectInstall = { version: string; spec: string | undefined };

/** The package as installed in `<dir>/node_modules` (a tarball, a path, `npm link` or a registry), else undefined. */
export function projectInstall(dir: string): ProjectInstall | undefined {
  const manifest = path.join(dir, "node_modules", PLUGIN_NAME, "package.json");
  let version: unknown;
  try {
    version = (JSON.parse(fs.readFileSync(manifest, "utf8")) as { version?: unknown }).version;
  } catch {
    return undefined;
  }
  let spec: string | undefined;
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
    spec = pkg.devDependencies?.[PLUGIN_NAME] ?? pkg.dependencies?.[PLUGIN_NAME];
  } catch {
    // No package.json of the project's own (an install by hand into node_modules): the version is enough to say.
  }
  return { version: typeof version === "string" ? version : "?", spec };
}

type Change = { say: string; apply: () => void };
export type LocalPlan = { ok: true; changes: Change[]; notes: string[] } | { ok: false; reason: string };

/**
 * What `init` changes for the local route: the local plugin file (when absent), every by-name entry of the plugin in
 * the project's OpenCode configs removed (with it OpenCode would still try the registry at each start, and would load
 * the plugin twice the day the registry has it), and on OpenCode 2 its own subagent depth raised as on the registry
 * route. Running it again plans nothing.
 */
export function planLocalPlugin(
  dir: string,
  env: NodeJS.ProcessEnv,
  show: (file: string) => string,
  host: DetectedHost,
  maxDepth: number,
  install: ProjectInstall,
): LocalPlan {
  const changes: Change[] = [];
  const notes = [
    `${PLUGIN_NAME} ${install.version} is installed in this project's node_modules${install.spec ? ` (${install.spec})` : ""}: OpenCode loads that copy, no registry needed.`,
  ];
  const file = path.join(dir, LOCAL_PLUGIN_FILE);
  if (!fs.existsSync(file)) {
    changes.push({
      say: `write ${show(file)} (loads the installed ${PLUGIN_NAME}; OpenCode 1 and 2 load it)`,
      apply: () => writeFile(file, LOCAL_PLUGIN_TEXT),
    });
  } else if (!fs.readFileSync(file, "utf8").includes(`"${PLUGIN_NAME}"`)) {
    notes.push(`kept existing ${show(file)} (it does not load ${PLUGIN_NAME}; not overwritten)`);
  }

  // Edits of one file are chained: its depth is raised on the text its plugin list was already edited into.
  const edited = new Map<string, { text: string; change: number }>();
  for (const config of configCandidates("project", dir, env).filter((f) => fs.existsSync(f))) {
    const read = readOpencodeConfig(config);
    if (!read.ok) return { ok: false, reason: `cannot edit ${show(config)}: ${read.reason}` };
    let text = read.text;
    const removed: PluginKey[] = [];
    for (const key of listedUnder(read.value)) {
      const next = removePluginByName(text, show(config), key);
      if (next === undefined)
        notes.push(`${show(config)} lists ${PLUGIN_NAME} with options under "${key}": remove that entry, or OpenCode loads a second copy from the registry`);
      else {
        text = next;
        removed.push(key);
      }
    }
    if (removed.length > 0) {
      edited.set(config, { text, change: changes.length });
      changes.push({
        say: `remove "${PLUGIN_NAME}" from the ${removed.join(" and ")} list in ${show(config)} (listed by name, OpenCode fetches it from the npm registry)`,
        apply: () => writeFile(config, text),
      });
    }
  }

  const at = depthKeyToWrite(host.line);
  if (at) {
    const need = hostDepthNeeded(maxDepth);
    const target = configFileToEdit("project", dir, env);
    const earlier = edited.get(target.file);
    const before =
      earlier?.text ?? (target.exists ? fs.readFileSync(target.file, "utf8") : `${JSON.stringify({ $schema: "https://opencode.ai/config.json" }, null, 2)}\n`);
    const raised = raiseNumberInConfig(before, at, need);
    if (raised !== undefined) {
      const say = `set ${at.join(".")} to ${need} in ${show(target.file)} (OpenCode 2's own subagent limit; governance decides within it)`;
      const apply = () => writeFile(target.file, raised);
      // One write per file: the removal's write is replaced by the write of both edits.
      if (earlier) changes[earlier.change] = { say: `${changes[earlier.change]!.say}, and ${say}`, apply };
      else changes.push({ say, apply });
    }
  }
  return { ok: true, changes, notes };
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}
