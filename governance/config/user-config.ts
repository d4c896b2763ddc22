import os from "node:os";
import path from "node:path";
import { readRegularFile } from "../storage/safe-fs.ts";
import type { ConfigProblem } from "./config-schema.ts";
import { LayerSettings } from "./layer-settings.ts";

/**
 * The user's own governance settings: `$XDG_CONFIG_HOME/opencode/governance.yaml` (default
 * `~/.config/opencode/governance.yaml`), beside OpenCode's own user config and outside every project. It holds the
 * user's ceilings over every project ({@link LayerSettings}: the limits of governance.yaml, and the telemetry
 * endpoint, headers and text opt-in that a project may not set). Optional: missing = no problem; a broken file is a
 * problem and sets nothing (the organisation's ceilings and the built-in bounds of a project's file still hold).
 * Read on every load (start, hot reload: the config watcher polls it too).
 */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "opencode", "governance.yaml");
}

const MAX_USER_CONFIG_BYTES = 16 * 1024;

export async function loadUserSettings(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ file: string; settings: LayerSettings; problems: ConfigProblem[]; state: "file" | "missing" | "broken" }> {
  const file = userConfigFile(env);
  let text: string;
  try {
    text = await readRegularFile(file, MAX_USER_CONFIG_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { file, settings: {}, problems: [], state: "missing" };
    return { file, settings: {}, problems: [{ message: `${file}: ${(error as Error).message}`, line: null, column: null, path: "" }], state: "broken" };
  }
  try {
    const { parseYamlData } = await import("./config-parse.ts");
    const parsed = LayerSettings.safeParse(parseYamlData(text) ?? {});
    if (parsed.success) return { file, settings: parsed.data, problems: [], state: "file" };
    return {
      file,
      settings: {},
      state: "broken",
      problems: parsed.error.issues
        .slice(0, 5)
        .map((i) => ({ message: `${file}: ${i.path.join(".") || "top level"}: ${i.message}`, line: null, column: null, path: i.path.join(".") })),
    };
  } catch (error) {
    return { file, settings: {}, problems: [{ message: `${file}: ${(error as Error).message}`, line: null, column: null, path: "" }], state: "broken" };
  }
}
