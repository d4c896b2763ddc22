import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { CLI_ENTRY } from "./paths.ts";
import type { TestProject } from "./test-project.ts";

const execFileP = promisify(execFile);

export type ProjectCliResult = { code: number; stdout: string; stderr: string };

/**
 * The built CLI as the project's user runs it (`node dist/cli/main.js … --dir <project>`), in its own process and in
 * the same user environment (HOME/XDG dirs) as the OpenCode the test started: the CLI signs its queue requests with
 * that user's key, and the plugin rejects a request signed with any other.
 */
export async function projectCli(project: TestProject, args: string[], opts: { timeoutMs?: number } = {}): Promise<ProjectCliResult> {
  try {
    const { stdout, stderr } = await execFileP(process.execPath, [CLI_ENTRY, ...args, "--dir", project.dir], {
      env: { ...process.env, ...project.env },
      timeout: opts.timeoutMs ?? 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string; message: string };
    return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
  }
}
