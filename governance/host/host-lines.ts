/**
 * The two OpenCode lines this package runs on, and everything that differs between them by NAME or LIMIT — in one
 * place, so the adapters translate through this table and the core keeps one vocabulary (OpenCode 1's: `task`,
 * `bash`). Sources are pinned in docs/opencode-2.md.
 */
export type HostNames = {
  /** The delegation tool: creates a child session. */
  readonly delegateTool: string;
  /** The shell tool. */
  readonly shellTool: string;
  /** The delegation tool's argument naming the target agent. */
  readonly delegateAgentArg: string;
  /** The config path of the host's own subagent depth limit, and its default. */
  readonly depthKey: readonly string[];
  readonly depthDefault: number;
  /** Whether the plugin raises that limit itself (OpenCode 1: its `config` hook); else `init` writes it, `doctor` checks it. */
  readonly depthRaisedByPlugin: boolean;
  /** The config key listing plugins. */
  readonly pluginKey: "plugin" | "plugins";
  /** The todo list's writing tool, or null where the host offers none (2.0.15's agents have no todo tool). */
  readonly todoTool: string | null;
};

const ROWS = {
  1: {
    delegateTool: "task",
    shellTool: "bash",
    delegateAgentArg: "subagent_type",
    depthKey: ["subagent_depth"],
    depthDefault: 1,
    depthRaisedByPlugin: true,
    pluginKey: "plugin",
    todoTool: "todowrite",
  },
  2: {
    delegateTool: "subagent",
    shellTool: "shell",
    delegateAgentArg: "agent",
    depthKey: ["experimental", "subagent_depth"],
    depthDefault: 1,
    depthRaisedByPlugin: false,
    pluginKey: "plugins",
    todoTool: null,
  },
} satisfies Record<number, HostNames>;

/** A host line is a row of {@link HOST_LINES}: adding a host is one row here (and one adapter folder in plugin/). */
export type HostLine = keyof typeof ROWS;

export const HOST_LINES: Readonly<Record<HostLine, HostNames>> = ROWS;

/** Every host line, in table order. */
export const HOST_LINE_KEYS: readonly HostLine[] = Object.keys(HOST_LINES).map(Number) as HostLine[];

/** The line whose names the core speaks (records, audit, texts without a host): OpenCode 1's `task`, `bash`. */
export const CORE_LINE: HostLine = 1;

/** The tools whose names differ between lines: a name of one line is translated to the same tool of another. */
const TRANSLATED_TOOLS = ["delegateTool", "shellTool"] as const satisfies readonly (keyof HostNames)[];

/** The tools a text tells the model to call, as the host offers them (a text must never name a tool it cannot call). */
export type TextTools = { readonly line: HostLine; readonly delegate: string; readonly todo: string | null };

/** The tools a text on `line` names: `task`/`todowrite` on OpenCode 1, `subagent` and no todo tool on OpenCode 2. */
export function textTools(line: HostLine): TextTools {
  return { line, delegate: HOST_LINES[line].delegateTool, todo: HOST_LINES[line].todoTool };
}

/** OpenCode 1's (the core's) names: what a text says when the caller names no host. */
export const CORE_TEXT_TOOLS: TextTools = textTools(CORE_LINE);

/** `tool` said in line `from`'s name, as line `to` names the same tool (a tool the table does not translate keeps its name). */
function translateTool(from: HostLine, to: HostLine, tool: string): string {
  if (from === to) return tool;
  const kind = TRANSLATED_TOOLS.find((k) => HOST_LINES[from][k] === tool);
  return kind ? HOST_LINES[to][kind] : tool;
}

/** The line a stored value names (an audit line's `line`), or undefined when it names none of the table's. */
export function hostLineNamed(value: unknown): HostLine | undefined {
  return HOST_LINE_KEYS.find((line) => line === value);
}

/** The core's tool name (OpenCode 1's) for a tool name of `line`. */
export function coreToolName(line: HostLine, tool: string): string {
  return translateTool(line, CORE_LINE, tool);
}

/** The name `line` offers for a core tool name: what a text must say so the model can call it (`shell`, not `bash`). */
export function hostToolName(line: HostLine, coreTool: string): string {
  return translateTool(CORE_LINE, line, coreTool);
}

/** The config path of `line`'s depth limit when `init` must write it (no plugin hook can raise it), else undefined. */
export function depthKeyToWrite(line: HostLine): readonly string[] | undefined {
  const row = HOST_LINES[line];
  return row.depthRaisedByPlugin ? undefined : row.depthKey;
}

/**
 * The host depth limit governance needs: one more than its own max depth, so the attempt beyond the limit reaches
 * governance's gate (which halts it with an explanation) instead of the host's opaque refusal.
 */
export function hostDepthNeeded(maxDepth: number): number {
  return maxDepth + 1;
}

/** The oldest OpenCode 1 release the plugin is verified on (npm run test:compat), and the OpenCode 2 line it follows. */
export const OLDEST_SUPPORTED_V1 = "1.15.13";
export const PINNED_V2 = "2.0.17";

/** The host line of an `opencode --version` answer ("1.18.33", "2.0.17", "0.0.0-beta-17728" = a V2 preview). */
export function hostLineOf(version: string): HostLine | undefined {
  const m = /(\d+)\.(\d+)\.(\d+)(-[\w.-]+)?/.exec(version.trim());
  if (!m) return undefined;
  const major = Number(m[1]);
  if (major >= 2) return 2;
  if (major === 1) return 1;
  if (major === 0 && m[4] && /^-(beta|next)/.test(m[4])) return 2;
  return undefined;
}

/** -1, 0, 1 on the numeric x.y.z part. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).slice(0, 3).map(Number);
  const pb = b.split(/[.-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
