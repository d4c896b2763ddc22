import fs from "node:fs";
import { DEFAULT_CONFIG, loadConfig, type LoadedConfig } from "../governance/config/config.ts";

/**
 * The config as the plugin would load it, for read-only commands: unlike `loadConfig`, a missing file is reported
 * as defaults and NOT created (only the plugin and `init` write `governance.yaml`).
 */
export async function readConfig(configFile: string): Promise<LoadedConfig> {
  if (!fs.existsSync(configFile)) {
    return { config: DEFAULT_CONFIG, source: "defaults", problems: [], warnings: [], created: false };
  }
  return loadConfig(configFile);
}
