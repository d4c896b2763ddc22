import { readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readRegularFile } from "../storage/safe-fs.ts";
import type { HostAgentSettings } from "./project-agents.ts";

/**
 * The agents OpenCode's own files define, read the way OpenCode reads them, for the places that cannot ask the host:
 * `init` (before OpenCode ever ran with governance), `doctor` and `status --explain`, OpenCode 2 (no `config` hook),
 * and the source of each agent OpenCode 1's `config` hook reports (which file a user edits). Read in OpenCode's order
 * — the user's global config, then the project's `opencode.json(c)`, then `.opencode/` — a later file's `mode` or
 * `permission` wins, as in OpenCode's merge. Untrusted files (docs/security.md): regular files only, size-capped, and
 * a file that does not parse is skipped (OpenCode would refuse it too).
 */

const MAX_AGENT_FILE_BYTES = 64 * 1024;
const MAX_AGENT_FILES = 200;

/** OpenCode's global config folder: `$XDG_CONFIG_HOME/opencode`, default `~/.config/opencode`. */
export function opencodeGlobalDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), ".config");
  return path.join(xdg, "opencode");
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readRegularFile(file, MAX_AGENT_FILE_BYTES);
  } catch {
    return undefined;
  }
}

/**
 * JSONC (comments, trailing commas) as JSON: comments outside strings become spaces, a comma before `}` or `]` goes.
 * Here rather than jsonc-parser, whose UMD build does not survive the plugin's bundle; a file that still does not
 * parse is skipped.
 */
export function parseJsonc(text: string): unknown {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
      out += " ";
    } else out += c;
  }
  try {
    return JSON.parse(out.replace(/,(\s*[}\]])/g, "$1"));
  } catch {
    return undefined;
  }
}

/** The `agent` map of an `opencode.json(c)`: name → its settings. */
async function configAgents(file: string): Promise<[string, Record<string, unknown>][]> {
  const text = await readText(file);
  if (text === undefined) return [];
  const value = parseJsonc(text) as { agent?: unknown } | undefined;
  const agents = value && typeof value === "object" ? value.agent : undefined;
  if (!agents || typeof agents !== "object" || Array.isArray(agents)) return [];
  return Object.entries(agents as Record<string, unknown>).flatMap(([name, v]): [string, Record<string, unknown>][] =>
    v && typeof v === "object" && !Array.isArray(v) ? [[name, v as Record<string, unknown>]] : [],
  );
}

/** The frontmatter of an agent's markdown file, or undefined when it has none that parses to a map. */
async function frontmatter(text: string): Promise<Record<string, unknown> | undefined> {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?(?:\n|$)/.exec(text);
  if (!m) return {};
  try {
    const { parseYamlData } = await import("./config-parse.ts");
    const data = parseYamlData(m[1] as string);
    return data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `<base>/agent/*.md` and `<base>/agents/*.md`, one level (the layout OpenCode documents), sorted. */
async function markdownAgents(base: string, shown: (f: string) => string): Promise<[string, Record<string, unknown>, string][]> {
  const out: [string, Record<string, unknown>, string][] = [];
  for (const folder of ["agent", "agents"]) {
    let names: string[];
    try {
      names = (await readdir(path.join(base, folder))).filter((f) => f.endsWith(".md")).sort();
    } catch {
      continue;
    }
    for (const f of names.slice(0, MAX_AGENT_FILES)) {
      const file = path.join(base, folder, f);
      const text = await readText(file);
      const data = text === undefined ? undefined : await frontmatter(text);
      if (data) out.push([f.slice(0, -3), data, shown(file)]);
    }
  }
  return out;
}

/**
 * Every agent OpenCode's files define for a project (`dir`) and its user (`env`), with the settings governance reads
 * and the file that set them last (shown relative to the project, or with `~` for the user's folder).
 */
export async function readOpencodeAgents(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<HostAgentSettings[]> {
  const global = opencodeGlobalDir(env);
  const home = env.HOME || os.homedir();
  const shown = (f: string) => {
    const rel = path.relative(dir, f);
    if (!rel.startsWith("..") && !path.isAbsolute(rel)) return rel;
    return home && f.startsWith(`${home}${path.sep}`) ? `~${f.slice(home.length)}` : f;
  };
  const layers: [string, Record<string, unknown>, string][][] = [];
  for (const f of ["config.json", "opencode.json", "opencode.jsonc"]) {
    const file = path.join(global, f);
    layers.push((await configAgents(file)).map(([n, v]) => [n, v, shown(file)]));
  }
  layers.push(await markdownAgents(global, shown));
  for (const file of [
    path.join(dir, "opencode.json"),
    path.join(dir, "opencode.jsonc"),
    path.join(dir, ".opencode", "opencode.json"),
    path.join(dir, ".opencode", "opencode.jsonc"),
  ]) {
    layers.push((await configAgents(file)).map(([n, v]) => [n, v, shown(file)]));
  }
  layers.push(await markdownAgents(path.join(dir, ".opencode"), shown));
  const merged = new Map<string, HostAgentSettings>();
  for (const layer of layers) {
    for (const [name, v, source] of layer) {
      if (v.disable === true) {
        merged.delete(name);
        continue;
      }
      const before = merged.get(name);
      merged.set(name, {
        name,
        source,
        mode: v.mode ?? before?.mode,
        permission: v.permission ?? before?.permission,
        tools: v.tools ?? before?.tools,
      });
    }
  }
  return [...merged.values()];
}
