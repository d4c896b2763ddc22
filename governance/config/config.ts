import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_CONFIG_YAML } from "./config-defaults.ts";
import { checkOpencodeDir, readRegularFile } from "../storage/safe-fs.ts";
import { type LayerSettings, type PolicyLayer, projectSettings } from "./layer-settings.ts";
import { LOCKDOWN, loadOrgPolicy, type OrgPolicy } from "./org-policy.ts";
import { holdCeiling, loosenedPaths } from "./ceiling-hold.ts";
import { mergePolicy, type Refusal } from "./policy-merge.ts";
import { loadUserSettings } from "./user-config.ts";
import type { HooksConfig } from "./hooks-config.ts";
import { type ConfigProblem, DEFAULT_CONFIG, type GovernanceConfig } from "./config-schema.ts";

export { DEFAULT_CONFIG_YAML };
/** The schema and its types live in config-schema.ts (no import cycle with the parser); re-exported for importers. */
export * from "./config-schema.ts";

export interface LoadedConfig {
  /** The effective config: the project's file under the user's and the organisation's ceilings. */
  config: GovernanceConfig;
  /** The project's file: "file": parsed from disk; "last-good"/"defaults": broken or unreadable, see `problems`. */
  source: "file" | "last-good" | "defaults";
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  /** True when this call wrote the default file because none existed. */
  created: boolean;
  /** Which layer set each limit, what was refused, and each layer's file (`status --explain`). */
  policy: PolicyReport;
  /** What the next load falls back to when a file is broken (the config watcher keeps it). */
  lastGood: LastGood;
  /** The user's own settings in force with this load (`$XDG_CONFIG_HOME/opencode/governance.yaml`); `{}` when none. */
  user?: LayerSettings;
  /** Ceiling files (user's, organisation's) not taken as read: missing, broken or looser than the last good (ceiling-hold.ts). */
  kept: KeptCeiling[];
  /** The user's own hooks (hooks-config.ts), from the user's file as read now; `{}` when none. No other layer sets them. */
  hooks: HooksConfig;
}

export type KeptCeiling = { layer: "user" | "organisation"; file: string; why: "missing" | "broken" | "loosened"; paths: string[] };

export type PolicyReport = {
  origins: Record<string, string>;
  refused: Refusal[];
  org: Pick<OrgPolicy, "file" | "source">;
  userFile: string;
};

/**
 * What the next load falls back to. `user`/`org`: the last good ceilings this process read (held when the file goes
 * missing, breaks or loosens); `orgSeen`: an organisation file was there (good or not) at some load of this process.
 */
export type LastGood = { project?: { config: GovernanceConfig; settings: LayerSettings }; org?: LayerSettings; user?: LayerSettings; orgSeen?: boolean };

/**
 * Reads the three layers and merges them (policy-merge.ts): the organisation's policy (org-policy.ts, fails closed),
 * the user's own file (user-config.ts), then the project's `.opencode/governance.yaml`, created with
 * DEFAULT_CONFIG_YAML when missing (S1-R02). Creation is atomic and never overwrites: the text goes to a temp file
 * that is hard-linked into place (fails if another process won the race), falling back to an exclusive create where
 * hard links are unsupported. A broken or unreadable project file never stops the plugin: it keeps running on
 * `lastGood` (or the defaults) and reports the problems. A looser value than a layer above allows is refused: a
 * problem naming both values and the layer of the ceiling.
 */
export async function loadConfig(
  configFile: string,
  lastGood: LastGood = {},
  env: NodeJS.ProcessEnv = process.env,
  /** false for read-only commands: a missing project file is the defaults, not created (only the plugin and `init` write it). */
  create = true,
): Promise<LoadedConfig> {
  const project = await loadProjectConfig(configFile, lastGood.project, create);
  const kept: KeptCeiling[] = [];
  const org = holdOrg(await loadOrgPolicy(env, lastGood.org), lastGood, kept);
  const userRead = await loadUserSettings(env);
  const userHold = holdCeiling(lastGood.user, { settings: userRead.state === "file" ? userRead.settings : undefined, state: userRead.state });
  if (userHold.kept) kept.push({ layer: "user", file: userRead.file, ...userHold.kept });
  const user = { ...userRead, settings: userHold.settings ?? userRead.settings };
  const layers: PolicyLayer[] = [];
  if (org.settings) layers.push({ name: "organisation", file: org.file, settings: org.settings });
  layers.push({ name: "user", file: user.file, settings: user.settings });
  layers.push({ name: "project", file: configFile, settings: project.settings });
  const merged = mergePolicy(project.loaded.config, layers);
  const refusals = merged.refused.map((r): ConfigProblem => ({ message: r.message, line: null, column: null, path: r.path }));
  return {
    ...project.loaded,
    config: merged.config,
    problems: [...org.problems, ...user.problems, ...project.loaded.problems, ...refusals],
    policy: { origins: merged.origins, refused: merged.refused, org: { file: org.file, source: org.source }, userFile: user.file },
    ...(Object.keys(user.settings).length > 0 ? { user: user.settings } : {}),
    kept,
    hooks: userRead.hooks,
    lastGood: {
      project: project.loaded.source === "file" ? { config: project.loaded.config, settings: project.settings } : lastGood.project,
      org: org.source === "file" ? org.settings : lastGood.org,
      user: userHold.lastGood,
      orgSeen: lastGood.orgSeen === true || org.source !== "none",
    },
  };
}

/**
 * The organisation's policy as this process holds it: removed or loosened after a good one was read, the last good
 * stays; removed after a broken one (lockdown), the lockdown stays — a missing file is never "no ceiling" once one
 * was there (issue 41 §3).
 */
function holdOrg(read: OrgPolicy, lastGood: LastGood, kept: KeptCeiling[]): OrgPolicy {
  if (read.source === "none" && (lastGood.org || lastGood.orgSeen)) {
    kept.push({ layer: "organisation", file: read.file, why: "missing", paths: [] });
    const held = lastGood.org ? "the last good organisation policy stays in force" : "every limit stays held at its default (lockdown)";
    const problem = {
      message: `organisation policy ${read.file} was removed while OpenCode ran; ${held} until OpenCode restarts`,
      line: null,
      column: null,
      path: "",
    };
    return { ...read, source: lastGood.org ? "last-good" : "lockdown", settings: lastGood.org ?? LOCKDOWN, problems: [problem] };
  }
  if (read.source === "file" && lastGood.org && read.settings) {
    const paths = loosenedPaths(lastGood.org, read.settings);
    if (paths.length === 0) return read;
    kept.push({ layer: "organisation", file: read.file, why: "loosened", paths });
    const problem = {
      message: `organisation policy ${read.file} loosens ${paths.slice(0, 5).join(", ")} while OpenCode runs; the last good one stays in force until OpenCode restarts`,
      line: null,
      column: null,
      path: "",
    };
    return { ...read, source: "last-good", settings: lastGood.org, problems: [problem] };
  }
  if (read.source === "last-good") kept.push({ layer: "organisation", file: read.file, why: "broken", paths: [] });
  return read;
}

type ProjectLoad = { loaded: Omit<LoadedConfig, "policy" | "lastGood" | "kept" | "hooks">; settings: LayerSettings };

/**
 * A cheap, linear look at the text before the YAML parser (which is synchronous and would hold the host's event loop:
 * 25,000 keys took 21 s): a hand-written config has a few dozen entries, so more than {@link MAX_CONFIG_ENTRIES}
 * significant lines, or one longer than {@link MAX_CONFIG_LINE} characters (a flow mapping), is refused unparsed.
 */
export function configShapeProblem(text: string): string | null {
  let entries = 0;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl === -1 ? text.length : nl;
    let i = start;
    while (i < end && (text[i] === " " || text[i] === "\t")) i++;
    if (i < end && text[i] !== "#" && text[i] !== "\r") {
      if (++entries > MAX_CONFIG_ENTRIES) return `the file has more than the ${MAX_CONFIG_ENTRIES} entries a governance config can have; refused unparsed`;
      if (end - i > MAX_CONFIG_LINE)
        return `line ${lineAt(text, start)} is ${end - i} characters long, more than the ${MAX_CONFIG_LINE} allowed; refused unparsed`;
    }
    start = end + 1;
  }
  return null;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

export const MAX_CONFIG_ENTRIES = 500;
export const MAX_CONFIG_LINE = 2_000;

async function loadProjectConfig(configFile: string, lastGood: LastGood["project"], create: boolean): Promise<ProjectLoad> {
  const fallback = (problems: ConfigProblem[], created = false): ProjectLoad => ({
    loaded: { config: lastGood?.config ?? DEFAULT_CONFIG, source: lastGood ? "last-good" : "defaults", problems, warnings: [], created },
    settings: lastGood?.settings ?? {},
  });
  const ioProblem = (error: unknown): ConfigProblem => ({ message: `${configFile}: ${(error as Error).message}`, line: null, column: null, path: "" });

  let created = false;
  let text: string;
  try {
    // `.opencode/` may be a symlink only if it stays inside the project: the config is never read or written elsewhere.
    checkOpencodeDir(path.dirname(configFile));
    text = await readRegularFile(configFile, MAX_CONFIG_BYTES);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return fallback([ioProblem(error)]);
    if (!create) return { loaded: { config: DEFAULT_CONFIG, source: "defaults", problems: [], warnings: [], created: false }, settings: {} };
    try {
      created = await createExclusive(configFile, DEFAULT_CONFIG_YAML);
      text = await readRegularFile(configFile, MAX_CONFIG_BYTES);
    } catch (createError) {
      return fallback([ioProblem(createError)], created);
    }
  }
  // The file as governance generates it needs no YAML parser: it is the defaults (test/governance/config checks
  // that they agree), and it sets no limit of its own — the user's and the organisation's settings apply as they
  // are. Only an edited file loads the parser, on demand (docs/performance.md: yaml is ~2 MiB in the host).
  if (text === DEFAULT_CONFIG_YAML) return { loaded: { config: DEFAULT_CONFIG, source: "file", problems: [], warnings: [], created }, settings: {} };
  const shape = configShapeProblem(text);
  if (shape) return fallback([{ message: `${configFile}: ${shape}`, line: null, column: null, path: "" }], created);
  const { parseConfig } = await import("./config-parse.ts");
  const parsed = parseConfig(text);
  if (!parsed.ok) return fallback(parsed.problems, created);
  return {
    loaded: { config: parsed.config, source: "file", problems: parsed.problems, warnings: parsed.warnings, created },
    settings: projectSettings(parsed.raw),
  };
}

/**
 * The config is a short hand-written file (the generated one is 3.5 KB); a FIFO, device, symlink or anything larger
 * than this is refused unread. 64 KB of comments still parse in a few ms.
 */
export const MAX_CONFIG_BYTES = 64 * 1024;

/** Writes `text` to `file` only if it does not exist. Returns whether this call created it. */
async function createExclusive(file: string, text: string): Promise<boolean> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(tmp, text, { flag: "wx", mode: 0o644 });
  try {
    await link(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    try {
      await writeFile(file, text, { flag: "wx" });
      return true;
    } catch (fallbackError) {
      if ((fallbackError as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw fallbackError;
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
