import path from "node:path";
import type { FileAccess } from "./protected-set.ts";

/**
 * The paths an in-process file tool of OpenCode acts on (issue 41 §2): these tools run inside OpenCode, not in the
 * shell's sandbox, so each target is checked against the protected set by real path (plugin/runtime/confinement.ts).
 * Pure: the tool's name and arguments in, its targets out. Both host lines: OpenCode 1 (`read`, `write`, `edit`,
 * `multiedit`, `patch`, `apply_patch`, `list`, `glob`, `grep`) and OpenCode 2.0.15 (the same names, `read`/`grep`/
 * `glob` take `path`, `patch` = `apply_patch`). An unknown tool (an MCP server's) is not judged here.
 */
export type FileTargets = { access: FileAccess; paths: string[]; searches: boolean };

const WRITE_TOOLS = new Set(["write", "edit", "multiedit", "patch", "apply_patch"]);
const READ_TOOLS = new Set(["read", "list", "ls", "view"]);
const SEARCH_TOOLS = new Set(["glob", "grep", "codesearch"]);
/** Argument names that hold a path (OpenCode's built-in tools, both lines). */
const PATH_ARGS = ["filePath", "filepath", "path", "file", "directory", "dir"];
/** apply_patch's file headers (`*** Update File: a/b.ts`, `*** Move to: …`). */
const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;
/** A patch longer than this is scanned only this far for headers. */
const MAX_SCAN = 1_048_576;

export function fileTargets(tool: string, args: Record<string, unknown> | undefined): FileTargets | undefined {
  const name = tool.toLowerCase();
  const writes = WRITE_TOOLS.has(name);
  const searches = SEARCH_TOOLS.has(name);
  if (!writes && !searches && !READ_TOOLS.has(name)) return undefined;
  const paths: string[] = [];
  for (const key of PATH_ARGS) {
    const value = args?.[key];
    if (typeof value === "string" && value.length > 0) paths.push(value);
  }
  const many = args?.filePaths;
  if (Array.isArray(many)) for (const p of many) if (typeof p === "string" && p.length > 0) paths.push(p);
  if (writes && args) {
    for (const value of Object.values(args)) {
      if (typeof value !== "string" || !value.includes("*** ")) continue;
      for (const m of value.slice(0, MAX_SCAN).matchAll(PATCH_FILE)) paths.push(m[1]!.trim());
    }
  }
  // A search or a listing with no path runs in the project folder: "." is checked like any other target.
  if (paths.length === 0 && !writes) paths.push(".");
  return { access: writes ? "write" : "read", paths, searches };
}

/**
 * The files a tool call writes, as a stopped subagent's parent reads them (issue 44 item 3): a write tool's targets,
 * relative to the project when inside it. A shell command's writes are not seen here (its arguments are a program).
 */
export function writtenFiles(tool: string, args: Record<string, unknown> | undefined, projectDir: string): string[] {
  const targets = fileTargets(tool, args);
  if (targets?.access !== "write") return [];
  return [
    ...new Set(
      targets.paths.slice(0, 50).map((p) => {
        const rel = path.relative(projectDir, path.resolve(projectDir, p));
        return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p;
      }),
    ),
  ];
}
