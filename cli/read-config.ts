import { type LoadedConfig, loadConfig } from "../governance/config/config.ts";

/**
 * The config as the plugin would load it (all three layers), for read-only commands: unlike the plugin's load, a
 * missing project file is reported as defaults and NOT created (only the plugin and `init` write `governance.yaml`).
 */
export function readConfig(configFile: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  return loadConfig(configFile, {}, env, false);
}
