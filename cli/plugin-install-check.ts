import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { configCandidates, readOpencodeConfig } from "./opencode-config.ts";
import { LOCAL_PLUGIN_FILE } from "./local-install.ts";
import { PLUGIN_NAME } from "./package-files.ts";

type Check = { ok: boolean; warn?: boolean; text: string };

/** OpenCode 1's folder for npm plugins: `$XDG_CACHE_HOME/opencode/packages`, default `~/.cache/opencode/packages`. */
export function opencodePackagesDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(env.HOME || os.homedir(), ".cache");
  return path.join(xdg, "opencode", "packages");
}

/** The by-name specs of this plugin in OpenCode 1 `plugin` lists (`"opencode-governance"`, `"…@0.2.0"`, `[name, {…}]`). */
function specsByName(files: string[]): string[] {
  const specs = new Set<string>();
  for (const file of files) {
    if (!fs.existsSync(file)) continue;
    const read = readOpencodeConfig(file);
    const list = read.ok ? read.value.plugin : undefined;
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      const spec = Array.isArray(p) ? p[0] : p;
      if (typeof spec === "string" && (spec === PLUGIN_NAME || spec.startsWith(`${PLUGIN_NAME}@`))) specs.add(spec);
    }
  }
  return [...specs];
}

/** How a newcomer gets the package while it is not on the public registry (README, "Install it"). */
export const TARBALL_ROUTE = `in a checkout of ${PLUGIN_NAME}, \`npm ci && npm run build && npm pack\`; here, \`npm install --save-dev <path to ${PLUGIN_NAME}-<version>.tgz>\` and \`npx ${PLUGIN_NAME} init\` (OpenCode then loads the installed copy, no registry)`;

/**
 * A plugin OpenCode was told to install and could not, which it never reports (decision 0005: nothing in the TUI, in
 * `--print-logs` or in its log files, even at DEBUG). Seen on OpenCode 1.18.33 with the registry answering 404 or
 * unreachable: it leaves `packages/<name>@<spec>/` EMPTY in its cache, and the session runs ungoverned. So an existing
 * folder without the package in it is the failed install; no folder means OpenCode has not tried yet (nothing to
 * say). It retries at each start while the folder is empty (seen: the next start with the registry reachable
 * installed and loaded it), so publishing is a fix too. And the local route's file (decision 0031) loads the copy in the project's node_modules: without that copy
 * (a fresh clone before `npm install`) it cannot load either.
 *
 * Not checked: OpenCode 2's cache (`npm/<name>@<spec>/<generation>/`), whose failure has not been observed on a real
 * binary.
 */
export function pluginInstallChecks(dir: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const files = [...configCandidates("project", dir, env), ...configCandidates("global", dir, env)];
  if (env.OPENCODE_CONFIG) files.push(path.resolve(dir, env.OPENCODE_CONFIG));
  for (const spec of specsByName(files)) {
    const folder = path.join(opencodePackagesDir(env), spec.includes("@") ? spec : `${spec}@latest`);
    if (!fs.existsSync(folder) || fs.existsSync(path.join(folder, "node_modules", PLUGIN_NAME, "package.json"))) continue;
    checks.push({
      ok: false,
      text: `OpenCode could not install "${spec}" from the npm registry: its cache folder ${folder} is empty, so OpenCode runs without governance (it reports nothing). ${PLUGIN_NAME} is not on the public npm registry yet. Fix: ${TARBALL_ROUTE}; or publish it to the registry your npm config names (\`npm config get registry\`): OpenCode tries again at its next start`,
    });
  }
  const local = path.join(dir, LOCAL_PLUGIN_FILE);
  if (fs.existsSync(local) && !fs.existsSync(path.join(dir, "node_modules", PLUGIN_NAME, "package.json"))) {
    checks.push({
      ok: false,
      text: `${LOCAL_PLUGIN_FILE} loads ${PLUGIN_NAME} from this project's node_modules, where it is not installed: run \`npm install\` here (or ${TARBALL_ROUTE})`,
    });
  }
  return checks;
}
