import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_CONFIG_YAML } from "./config-defaults.ts";
import { checkOpencodeDir, readRegularFile } from "../storage/safe-fs.ts";
import { applyProjectBounds, type UserSettings } from "./project-bounds.ts";
import { loadUserSettings } from "./user-config.ts";
import { type ConfigProblem, DEFAULT_CONFIG, type GovernanceConfig } from "./config-schema.ts";

export { DEFAULT_CONFIG_YAML };
/** The schema and its types live in config-schema.ts (no import cycle with the parser); re-exported for importers. */
export * from "./config-schema.ts";

export interface LoadedConfig {
  config: GovernanceConfig;
  /** "file": parsed from disk; "last-good"/"defaults": the file is broken or unreadable, see `problems`. */
  source: "file" | "last-good" | "defaults";
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  /** True when this call wrote the default file because none existed. */
  created: boolean;
  /** The user's own settings as read with this load (`$XDG_CONFIG_HOME/opencode/governance.yaml`); `{}` when none. */
  user?: UserSettings;
}

/**
 * Reads the config file, creating it with DEFAULT_CONFIG_YAML when missing (S1-R02). Creation is atomic and never
 * overwrites: the text goes to a temp file that is hard-linked into place (fails if another process won the race),
 * falling back to an exclusive create where hard links are unsupported. A broken or unreadable file never stops the
 * plugin: it keeps running on `lastGood` (or the defaults) and reports the problems.
 */
export async function loadConfig(configFile: string, lastGood?: GovernanceConfig, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const loaded = await loadProjectConfig(configFile, lastGood);
  // The user's own settings win over the project's file; the project's file is bounded where it would weaken the
  // user's record-keeping (project-bounds.ts). Applied to every source, the defaults included.
  const user = await loadUserSettings(env);
  const bounded = applyProjectBounds(loaded.config, user.settings);
  const problems = [...user.problems, ...bounded.problems];
  const own = Object.keys(user.settings).length > 0 ? { user: user.settings } : {};
  return problems.length === 0 && bounded.config === loaded.config
    ? { ...loaded, ...own }
    : { ...loaded, config: bounded.config, problems: [...loaded.problems, ...problems], ...own };
}

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

async function loadProjectConfig(configFile: string, lastGood?: GovernanceConfig): Promise<LoadedConfig> {
  const fallback = (problems: ConfigProblem[], created = false): LoadedConfig => ({
    config: lastGood ?? DEFAULT_CONFIG,
    source: lastGood ? "last-good" : "defaults",
    problems,
    warnings: [],
    created,
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
    try {
      created = await createExclusive(configFile, DEFAULT_CONFIG_YAML);
      text = await readRegularFile(configFile, MAX_CONFIG_BYTES);
    } catch (createError) {
      return fallback([ioProblem(createError)], created);
    }
  }
  // The file as governance generates it needs no YAML parser: it is the defaults (test/governance/config checks
  // that they agree). Only an edited file loads the parser, on demand (docs/performance.md: yaml is ~2 MiB in the host).
  if (text === DEFAULT_CONFIG_YAML) return { config: DEFAULT_CONFIG, source: "file", problems: [], warnings: [], created };
  const shape = configShapeProblem(text);
  if (shape) return fallback([{ message: `${configFile}: ${shape}`, line: null, column: null, path: "" }], created);
  const { parseConfig } = await import("./config-parse.ts");
  const parsed = parseConfig(text);
  if (!parsed.ok) return fallback(parsed.problems, created);
  return { config: parsed.config, source: "file", problems: parsed.problems, warnings: parsed.warnings, created };
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
