import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  applyEdits,
  createScanner,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { PLUGIN_NAME } from "./package-files.ts";

/**
 * OpenCode's own config files (`opencode.json` / `opencode.jsonc`), as `init` edits them and `doctor` reads them.
 * They are JSONC: comments and trailing commas are allowed, and a user's comments and layout are theirs, so every
 * edit goes through jsonc-parser's `modify` + `applyEdits` (a minimal text edit), never parse-and-reserialize.
 */

export type Scope = "project" | "global";

/** The folder OpenCode reads its global config from: `$XDG_CONFIG_HOME/opencode`, default `~/.config/opencode`. */
export function globalConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), ".config");
  return path.join(xdg, "opencode");
}

/**
 * Candidate config files of a scope, in the order `init` prefers them for editing: an existing `opencode.jsonc`
 * first (a user who chose JSONC keeps one file, never gets a second `opencode.json` beside it), then
 * `opencode.json`; globally also OpenCode's legacy `config.json`. In a project, `.opencode/opencode.json(c)` is read
 * by OpenCode too, so `doctor` looks there as well.
 */
export function configCandidates(scope: Scope, dir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (scope === "global") return ["opencode.jsonc", "opencode.json", "config.json"].map((f) => path.join(globalConfigDir(env), f));
  return [
    path.join(dir, "opencode.jsonc"),
    path.join(dir, "opencode.json"),
    path.join(dir, ".opencode", "opencode.jsonc"),
    path.join(dir, ".opencode", "opencode.json"),
  ];
}

/**
 * The file `init` edits: the first existing candidate (a project configured only through `.opencode/opencode.jsonc`
 * gets that file edited, not a second config at the root), else a new `opencode.json` in the scope's folder.
 */
export function configFileToEdit(scope: Scope, dir: string, env: NodeJS.ProcessEnv = process.env): { file: string; exists: boolean } {
  const existing = configCandidates(scope, dir, env).find((f) => fs.existsSync(f));
  if (existing) return { file: existing, exists: true };
  return { file: scope === "global" ? path.join(globalConfigDir(env), "opencode.json") : path.join(dir, "opencode.json"), exists: false };
}

export type ReadConfig = { ok: true; text: string; value: Record<string, unknown> } | { ok: false; reason: string };

/** Parses a JSONC config file; an error says where, in the user's terms (line and column). */
export function readOpencodeConfig(file: string): ReadConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    return { ok: false, reason: `cannot read ${file}: ${(error as Error).message}` };
  }
  return parseOpencodeConfig(text, file);
}

export function parseOpencodeConfig(text: string, file: string): ReadConfig {
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0]!;
    const before = text.slice(0, e.offset).split("\n");
    return { ok: false, reason: `${file} line ${before.length}, column ${before.at(-1)!.length + 1}: ${printParseErrorCode(e.error)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, reason: `${file} is not a JSON object` };
  return { ok: true, text, value: value as Record<string, unknown> };
}

/** The config key OpenCode lists plugins under: `plugin` (OpenCode 1), `plugins` (OpenCode 2; governance/host/host-lines.ts). */
export type PluginKey = "plugin" | "plugins";

/**
 * True when a plugin list names this package: OpenCode 1's `plugin` (`"opencode-governance"`, `"…@1.2.3"`,
 * `[name, options]`) or OpenCode 2's `plugins` (`string | { package, options }`).
 */
export function listsPlugin(config: Record<string, unknown>): boolean {
  return listedUnder(config).length > 0;
}

/** The plugin-list keys (`plugin`, `plugins`) whose list names this package. */
export function listedUnder(config: Record<string, unknown>): PluginKey[] {
  return (["plugin", "plugins"] as const).filter((key) => {
    const plugins = config[key];
    if (!Array.isArray(plugins)) return false;
    return plugins.some((p) => {
      const spec = Array.isArray(p) ? p[0] : p && typeof p === "object" ? (p as { package?: unknown }).package : p;
      return typeof spec === "string" && (spec === PLUGIN_NAME || spec.startsWith(`${PLUGIN_NAME}@`));
    });
  });
}

/** Indentation as the file already has it (first indented line), so an inserted entry looks like its neighbours. */
export function detectFormatting(text: string): FormattingOptions {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indent = /^([ \t]+)\S/m.exec(text)?.[1];
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 1, eol };
  return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol };
}

export type PluginEdit = { ok: true; text: string; changed: boolean } | { ok: false; reason: string };

/**
 * The config text with this plugin appended to `plugin` (creating the list if needed), everything else untouched.
 * `changed: false` when it is already listed. A `plugin` that is not a list is the user's to fix, not ours to replace.
 */
export function addPluginToConfig(text: string, file = "opencode.json", key: PluginKey = "plugin"): PluginEdit {
  const read = parseOpencodeConfig(text, file);
  if (!read.ok) return read;
  const config = read.value;
  // Listed under the OTHER line's key does not count: the host reading `key` would not see it (issue 25 item 6).
  if (listedUnder(config).includes(key)) return { ok: true, text, changed: false };
  if (config[key] !== undefined && !Array.isArray(config[key])) {
    return { ok: false, reason: `${file}: "${key}" is not a list; make it one and add "${PLUGIN_NAME}" to it` };
  }
  const formattingOptions = detectFormatting(text);
  const tree = parseTree(text, [], { allowTrailingComma: true });
  const list = tree && findNodeAtLocation(tree, [key]);
  const last = list ? list.children?.at(-1) : tree?.children?.at(-1);
  const item = list ? JSON.stringify(PLUGIN_NAME) : `${JSON.stringify(key)}: [${JSON.stringify(PLUGIN_NAME)}]`;
  let next = last
    ? appendAfter(text, last, item, formattingOptions.eol ?? "\n")
    : list
      ? `${text.slice(0, list.offset + 1)}${item}${text.slice(list.offset + 1)}`
      : undefined;
  // An empty object has no neighbour to line up with (and a safety net): jsonc-parser's own edit.
  const check = next === undefined ? undefined : parseOpencodeConfig(next, file);
  if (!check?.ok || !listedUnder(check.value).includes(key)) {
    const edits = list
      ? modify(text, [key, (config[key] as unknown[]).length], PLUGIN_NAME, { formattingOptions, isArrayInsertion: true })
      : modify(text, [key], [PLUGIN_NAME], { formattingOptions });
    next = applyEdits(text, edits);
  }
  return { ok: true, text: next!, changed: true };
}

/**
 * Inserts `item` after the last element of a list or the last property of an object, the way a person would:
 * on its own line after the last one's line (after its comma and its end-of-line comment, which jsonc-parser's
 * `modify` would otherwise leave behind the new entry), with the same indentation, keeping a trailing-comma style;
 * on a one-line list, inline. Tokens come from jsonc-parser's scanner, so commas inside comments or strings are
 * never mistaken for separators.
 */
/** jsonc-parser's `SyntaxKind` values (a `const enum`, which this project's isolated modules cannot import). */
const Token = { Comma: 5, LineComment: 12, BlockComment: 13, LineBreak: 14, Trivia: 15, EOF: 17 } as const;

function appendAfter(text: string, last: Node, item: string, eol: string): string {
  const end = last.offset + last.length;
  const scanner = createScanner(text, false);
  scanner.setPosition(end);
  let comma = -1;
  let lineEnd = text.length;
  let sameLine = false;
  for (;;) {
    const token = scanner.scan();
    if (token === Token.Trivia || token === Token.LineComment || token === Token.BlockComment) continue;
    if (token === Token.Comma && comma < 0) {
      comma = scanner.getTokenOffset();
      continue;
    }
    lineEnd = scanner.getTokenOffset();
    sameLine = token !== Token.LineBreak && token !== Token.EOF;
    break;
  }
  if (sameLine) {
    return comma < 0 ? `${text.slice(0, end)}, ${item}${text.slice(end)}` : `${text.slice(0, comma + 1)} ${item},${text.slice(comma + 1)}`;
  }
  const lineStart = text.lastIndexOf("\n", last.offset) + 1;
  const indent = /^[ \t]*/.exec(text.slice(lineStart))![0];
  const head = comma < 0 ? `${text.slice(0, end)},${text.slice(end, lineEnd)}` : text.slice(0, lineEnd);
  return `${head}${eol}${indent}${item}${comma < 0 ? "" : ","}${text.slice(lineEnd)}`;
}

/** A new config file for a folder that has none. */
export function newConfigText(key: PluginKey = "plugin"): string {
  return `${JSON.stringify({ $schema: "https://opencode.ai/config.json", [key]: [PLUGIN_NAME] }, null, 2)}\n`;
}

/**
 * The config text with a number set at `at` (e.g. OpenCode 2's `experimental.subagent_depth`) when it is absent or
 * lower than `min`, comments and layout kept; undefined when nothing needs to change.
 */
export function raiseNumberInConfig(text: string, at: readonly string[], min: number): string | undefined {
  const read = parseOpencodeConfig(text, "config");
  if (!read.ok) return undefined;
  let cur: unknown = read.value;
  for (const k of at) cur = cur && typeof cur === "object" ? (cur as Record<string, unknown>)[k] : undefined;
  if (typeof cur === "number" && cur >= min) return undefined;
  return applyEdits(text, modify(text, [...at], min, { formattingOptions: detectFormatting(text) }));
}

/**
 * The config text without this plugin's by-name entries in `key`'s list (`"opencode-governance"`,
 * `"opencode-governance@1.2.3"`), everything else untouched; undefined when there is none. An entry with options
 * (`[name, {…}]` / `{ package, options }`) is the user's and stays: the caller says so instead. Each entry is cut out
 * with its separator (and a comment on its line), as a person would delete it: jsonc-parser's `modify` re-indents the
 * list and, with a trailing comma after it, leaves text that no longer parses.
 */
export function removePluginByName(text: string, file: string, key: PluginKey): string | undefined {
  if (!parseOpencodeConfig(text, file).ok) return undefined;
  const byName = (n: Node) => n.type === "string" && (n.value === PLUGIN_NAME || String(n.value).startsWith(`${PLUGIN_NAME}@`));
  let next = text;
  // One entry at a time, each on a fresh parse, so every offset used is the current text's.
  for (;;) {
    const tree = parseTree(next, [], { allowTrailingComma: true });
    const array = tree && findNodeAtLocation(tree, [key]);
    const items = array?.type === "array" ? (array.children ?? []) : [];
    const at = items.findIndex(byName);
    if (at < 0) return next === text ? undefined : next;
    if (items.length === 1) {
      next = `${next.slice(0, array!.offset)}[]${next.slice(array!.offset + array!.length)}`;
      continue;
    }
    const n = items[at]!;
    const following = items[at + 1];
    const before = items[at - 1];
    const [from, to] = following ? [n.offset, following.offset] : [before!.offset + before!.length, n.offset + n.length];
    next = next.slice(0, from) + next.slice(to);
  }
}
