import os from "node:os";
import path from "node:path";
import { readRegularFile } from "../storage/safe-fs.ts";
import type { ConfigProblem } from "./config-schema.ts";
import { UserSettings } from "./project-bounds.ts";

/**
 * The user's own governance settings: `$XDG_CONFIG_HOME/opencode/governance.yaml` (default
 * `~/.config/opencode/governance.yaml`), beside OpenCode's own user config and outside every project. It holds only
 * the settings a project's file may not weaken (project-bounds.ts): `enforcement`, `audit.maxBytes`,
 * `stop.deadline`, `stop.retryDeadline`. Optional: missing = no problem (one failed open at load). Read when the
 * project's config is loaded (start, hot reload); a change to it takes effect with the next load.
 */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "opencode", "governance.yaml");
}

const MAX_USER_CONFIG_BYTES = 16 * 1024;

export async function loadUserSettings(env: NodeJS.ProcessEnv = process.env): Promise<{ settings: UserSettings; problems: ConfigProblem[] }> {
  const file = userConfigFile(env);
  let text: string;
  try {
    text = await readRegularFile(file, MAX_USER_CONFIG_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { settings: {}, problems: [] };
    return { settings: {}, problems: [{ message: `${file}: ${(error as Error).message}`, line: null, column: null, path: "" }] };
  }
  try {
    const { parseYamlData } = await import("./config-parse.ts");
    const parsed = UserSettings.safeParse(parseYamlData(text) ?? {});
    if (parsed.success) return { settings: parsed.data, problems: [] };
    return {
      settings: {},
      problems: parsed.error.issues.slice(0, 5).map((i) => ({ message: `${file}: ${i.message}`, line: null, column: null, path: i.path.join(".") })),
    };
  } catch (error) {
    return { settings: {}, problems: [{ message: `${file}: ${(error as Error).message}`, line: null, column: null, path: "" }] };
  }
}
