import fs from "fs-extra";
import path from "node:path";
import { DEFAULT_CONFIG_YAML } from "../governance/config/config.ts";
import { ensureGovernanceDir, governancePaths } from "../governance/storage/governance-paths.ts";
import { PLUGIN_NAME, packageRoot } from "./package-files.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };

/**
 * Installs governance into an OpenCode project: the plugin in `opencode.json` (`"plugin": ["opencode-governance"]`,
 * which OpenCode installs from npm), the governed agents in `.opencode/agent/`, the default `governance.yaml`, and
 * the git-ignored state folder. Never overwrites a file the user has: an existing agent or config is kept and reported.
 */
export async function runInit(dir: string, io: Io): Promise<number> {
  const configPath = path.join(dir, "opencode.json");
  let config: Record<string, unknown> = { $schema: "https://opencode.ai/config.json" };
  if (fs.existsSync(configPath)) {
    try {
      config = fs.readJsonSync(configPath) as Record<string, unknown>;
    } catch (error) {
      io.err(`opencode.json is not plain JSON (${(error as Error).message}); add "${PLUGIN_NAME}" to its "plugin" list by hand.`);
      return 1;
    }
  }
  const plugins = Array.isArray(config.plugin) ? (config.plugin as unknown[]) : [];
  if (!plugins.some((p) => p === PLUGIN_NAME || (Array.isArray(p) && p[0] === PLUGIN_NAME))) {
    config.plugin = [...plugins, PLUGIN_NAME];
    fs.writeJsonSync(configPath, config, { spaces: 2 });
    io.out(`added "${PLUGIN_NAME}" to ${configPath}`);
  } else io.out(`plugin already listed in ${configPath}`);

  const agentsSrc = path.join(packageRoot(), "agents");
  const agentsDst = path.join(dir, ".opencode", "agent");
  for (const f of fs.readdirSync(agentsSrc).filter((f) => f.endsWith(".md"))) {
    const dst = path.join(agentsDst, f);
    if (fs.existsSync(dst)) {
      io.out(`kept existing ${path.relative(dir, dst)}`);
      continue;
    }
    fs.outputFileSync(dst, fs.readFileSync(path.join(agentsSrc, f)));
    io.out(`installed ${path.relative(dir, dst)}`);
  }
  const paths = governancePaths(dir);
  await ensureGovernanceDir(paths);
  if (!fs.existsSync(paths.configFile)) {
    fs.outputFileSync(paths.configFile, DEFAULT_CONFIG_YAML);
    io.out(`wrote ${path.relative(dir, paths.configFile)} with the defaults`);
  }
  io.out("done. Start OpenCode in this project, then run `opencode-governance doctor` to confirm the plugin loaded.");
  return 0;
}
