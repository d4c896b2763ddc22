import os from "node:os";
import path from "node:path";
import { readRegularFile } from "../storage/safe-fs.ts";
import type { ConfigProblem } from "./config-schema.ts";
import { HooksConfig } from "./hooks-config.ts";
import { LayerSettings } from "./layer-settings.ts";

/**
 * The user's own governance settings: `$XDG_CONFIG_HOME/opencode/governance.yaml` (default
 * `~/.config/opencode/governance.yaml`), beside OpenCode's own user config and outside every project. It holds the
 * user's ceilings over every project ({@link LayerSettings}: the limits of governance.yaml, and the telemetry
 * endpoint, headers and text opt-in that a project may not set), and the user's `hooks` (hooks-config.ts), which no
 * other file may set. Optional: missing = no problem; a broken file is a problem and sets nothing (the organisation's
 * ceilings and the built-in bounds of a project's file still hold). A mistake in `hooks` is a problem of its own: it
 * costs the hooks, never the ceilings. Read on every load (start, hot reload: the config watcher polls it too).
 */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), ".config");
  return path.join(base, "opencode", "governance.yaml");
}

const MAX_USER_CONFIG_BYTES = 16 * 1024;

export type UserRead = { file: string; settings: LayerSettings; hooks: HooksConfig; problems: ConfigProblem[]; state: "file" | "missing" | "broken" };

const problem = (file: string, message: string, at = ""): ConfigProblem => ({ message: `${file}: ${message}`, line: null, column: null, path: at });

export async function loadUserSettings(env: NodeJS.ProcessEnv = process.env): Promise<UserRead> {
  const file = userConfigFile(env);
  let text: string;
  try {
    text = await readRegularFile(file, MAX_USER_CONFIG_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { file, settings: {}, hooks: {}, problems: [], state: "missing" };
    return { file, settings: {}, hooks: {}, problems: [problem(file, (error as Error).message)], state: "broken" };
  }
  try {
    const { parseYamlData } = await import("./config-parse.ts");
    const data = parseYamlData(text) ?? {};
    const { hooks: rawHooks, ...rest } = data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : { _: data };
    const hooks = rawHooks === undefined || rawHooks === null ? { success: true as const, data: {} } : HooksConfig.safeParse(rawHooks);
    const hookProblems = hooks.success ? [] : issues(file, hooks.error.issues, ["hooks"]);
    const parsed = LayerSettings.safeParse(rest);
    if (parsed.success) return { file, settings: parsed.data, hooks: hooks.success ? hooks.data : {}, problems: hookProblems, state: "file" };
    return { file, settings: {}, hooks: hooks.success ? hooks.data : {}, state: "broken", problems: [...issues(file, parsed.error.issues), ...hookProblems] };
  } catch (error) {
    return { file, settings: {}, hooks: {}, problems: [problem(file, (error as Error).message)], state: "broken" };
  }
}

function issues(file: string, list: readonly { path: PropertyKey[]; message: string }[], prefix: string[] = []): ConfigProblem[] {
  return list.slice(0, 5).map((i) => {
    const at = [...prefix, ...i.path.map(String)].join(".");
    return problem(file, `${at || "top level"}: ${i.message}`, at);
  });
}
