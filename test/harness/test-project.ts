import { configForHost, type HostUnderTest, hostUnderTest } from "./host-under-test.ts";
import { auditEvents } from "./governance-files.ts";
import { execFileSync } from "node:child_process";
import fs from "fs-extra";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { linkWarmDeps } from "./warm-cache.ts";
import { PLUGIN_ENTRY, REPO_ROOT } from "./paths.ts";

export type PluginMode = "local" | "none";

export type ProjectOptions = {
  modelUrl: string;
  /** `local`: `.opencode/plugin/governance.js` re-exports the built plugin (default). `none`: OpenCode ungoverned. */
  plugin?: PluginMode;
  /** Written to `.opencode/governance.yaml` before the first start (else the plugin generates the defaults). */
  governanceYaml?: string;
  /** Install this repository's agents/ into `.opencode/agent/`. */
  agents?: boolean;
  /** Extra agent markdown files: name → content. */
  extraAgents?: Record<string, string>;
  /** Merged into opencode.json. */
  opencodeConfig?: Record<string, unknown>;
  /** Files to create in the project (relative path → content). */
  files?: Record<string, string>;
  /**
   * Only for the test that proves governance notices it is not governing (test/e2e/governance-gap.test.ts): every
   * other project's `cleanup()` fails the test when the plugin wrote a `governance_gap` line (issue 25 item 5).
   */
  allowGovernanceGaps?: boolean;
  /** The OpenCode this project is for (its config shape, plugin folder, binary): the suite's host by default. */
  host?: HostUnderTest;
};

export type TestProject = {
  dir: string;
  home: string;
  env: NodeJS.ProcessEnv;
  governanceDir: string;
  /** The OpenCode that runs in this project (runOpencode / serveOpencode start this binary). */
  host: HostUnderTest;
  cleanup(): void;
};

/** OpenCode 2's server answers 401 without HTTP Basic `opencode:<this>` (the harness sets it for every V2 project). */
export const V2_SERVER_PASSWORD = "governance-e2e";

export const MODEL_ID = "scripted/scripted-model";

/**
 * A throwaway git project that OpenCode will run in, isolated from the machine: HOME and XDG dirs in a temp folder,
 * autoupdate/sharing/LSP/model-list fetching off, a provider pointing at the scripted model, and (by default) the
 * built plugin installed as a local plugin — the way a user drops it into `.opencode/plugin/`.
 */
export function createTestProject(opts: ProjectOptions): TestProject {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-e2e-"));
  const dir = path.join(root, "project");
  const home = path.join(root, "home");
  fs.mkdirpSync(dir);
  for (const sub of ["config/opencode", "data", "cache", "state"]) fs.mkdirpSync(path.join(home, sub));
  const host = opts.host ?? hostUnderTest();
  linkWarmDeps(path.join(home, "config", "opencode"), host.line);

  const config = host.line === 2 ? { ...v2Config(opts.modelUrl), ...opts.opencodeConfig } : { ...v1Config(opts.modelUrl), ...opts.opencodeConfig };
  fs.writeJsonSync(path.join(dir, "opencode.json"), configForHost(config, host.line), { spaces: 2 });
  linkWarmDeps(path.join(dir, ".opencode"), host.line);

  if ((opts.plugin ?? "local") === "local") {
    // OpenCode 2 loads a file in `.opencode/plugins/` (a package directory in `plugins` it resolves as `<dir>/server` or
    // `<dir>/index`); OpenCode 1 reads `.opencode/plugin/`.
    fs.outputFileSync(
      path.join(dir, ".opencode", host.line === 2 ? "plugins" : "plugin", "governance.js"),
      `export { default } from ${JSON.stringify(pathToFileURL(PLUGIN_ENTRY).href)};\n`,
    );
  }
  if (opts.governanceYaml !== undefined) fs.outputFileSync(path.join(dir, ".opencode", "governance.yaml"), opts.governanceYaml);
  if (opts.agents) {
    const agentsDir = path.join(REPO_ROOT, "agents");
    for (const f of fs.readdirSync(agentsDir).filter((f) => f.endsWith(".md"))) {
      fs.outputFileSync(path.join(dir, ".opencode", "agent", f), fs.readFileSync(path.join(agentsDir, f)));
    }
  }
  for (const [name, content] of Object.entries(opts.extraAgents ?? {})) {
    fs.outputFileSync(path.join(dir, ".opencode", "agent", `${name}.md`), content);
  }
  for (const [rel, content] of Object.entries(opts.files ?? {})) fs.outputFileSync(path.join(dir, rel), content);
  fs.outputFileSync(path.join(dir, ".gitignore"), ".opencode/node_modules\n.opencode/package*.json\n");

  execFileSync("git", ["init", "-q"], { cwd: dir });
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=test", "add", "-A"], { cwd: dir });
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=test", "commit", "-qm", "init"], { cwd: dir });

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: "C.UTF-8",
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, "config"),
    XDG_DATA_HOME: path.join(home, "data"),
    XDG_CACHE_HOME: path.join(home, "cache"),
    XDG_STATE_HOME: path.join(home, "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    npm_config_fetch_retries: "0",
    npm_config_audit: "false",
    npm_config_fund: "false",
    ...(host.line === 2 ? { OPENCODE_SERVER_PASSWORD: V2_SERVER_PASSWORD } : {}),
  };
  return {
    dir,
    home,
    env,
    governanceDir: path.join(dir, ".opencode", "governance"),
    host,
    cleanup: () => {
      // With everything working, governance never reports itself missing: asserted for every end-to-end project here,
      // so no test file can forget it (read before the folder goes).
      const gaps = opts.allowGovernanceGaps ? [] : auditEvents(path.join(dir, ".opencode", "governance")).filter((e) => e.type === "governance_gap");
      fs.removeSync(root);
      if (gaps.length > 0) throw new Error(`governance reported itself missing in this end-to-end test: ${JSON.stringify(gaps)}`);
    },
  };
}

/** OpenCode 1's config: the scripted provider through `@ai-sdk/openai-compatible` (bundled in the 1.18 binary). */
function v1Config(modelUrl: string): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    lsp: false,
    formatter: false,
    model: MODEL_ID,
    small_model: MODEL_ID,
    permission: { edit: "allow", bash: "allow", webfetch: "deny", external_directory: "allow" },
    ...scriptedProvider(modelUrl),
  };
}

/**
 * OpenCode 1's `provider` entry for the scripted model, one model per key; a model given prices (dollars per million
 * tokens: `input`, `output`, `cache_read`, `cache_write`) has its steps' cost computed by OpenCode from the usage the
 * scripted model reports, one given `undefined` costs nothing. Pass it as `opencodeConfig` to replace the default.
 */
export function scriptedProvider(
  modelUrl: string,
  models: Record<string, Record<string, number> | undefined> = { "scripted-model": undefined },
): Record<string, unknown> {
  const entry = (cost: Record<string, number> | undefined) => ({
    name: "Scripted model",
    tool_call: true,
    limit: { context: 200_000, output: 8_000 },
    ...(cost ? { cost } : {}),
  });
  return {
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted model",
        options: { baseURL: modelUrl, apiKey: "scripted" },
        models: Object.fromEntries(Object.entries(models).map(([id, cost]) => [id, entry(cost)])),
      },
    },
  };
}

/**
 * OpenCode 2's own config shape (as compiled into 2.0.15): `providers` with the OpenAI-compatible provider it bundles,
 * `update: "disable"`, `share: "disabled"`; `plugins` and `experimental.subagent_depth` come from configForHost.
 */
function v2Config(modelUrl: string): Record<string, unknown> {
  return {
    model: MODEL_ID,
    providers: {
      scripted: {
        package: "@opencode/ai/providers/openai-compatible",
        settings: { baseURL: modelUrl, apiKey: "scripted" },
        models: {
          "scripted-model": { capabilities: { tools: true, input: ["text"], output: ["text"] }, limit: { context: 200_000, output: 8_000 } },
        },
      },
    },
    update: "disable",
    share: "disabled",
  };
}
