import { accessSync, constants, lstatSync } from "node:fs";
import { join } from "node:path";
import type { GovernancePaths } from "./governance-paths.ts";
import { checkGovernanceRoot, checkRealDir } from "./safe-fs.ts";

/**
 * What is wrong with the state folder, for `status` and `doctor`: a symlink or special file where governance expects
 * its own folder or file (refused, so that part of governance is off), or a folder this process cannot write
 * (root-owned after a `sudo opencode`, read-only file system): sessions still run, but unrecorded. Read-only: one
 * `lstat`/`access` per entry, nothing is created. An empty list means healthy (or not created yet).
 */
export function stateFolderProblems(paths: GovernancePaths): string[] {
  const problems: string[] = [];
  const attempt = (check: () => void) => {
    try {
      check();
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  };
  attempt(() => checkGovernanceRoot(paths.root));
  if (problems.length > 0) return problems;
  const folders = [paths.root, paths.sessions, paths.queues, paths.quarantine, paths.archive];
  for (const folder of folders) {
    attempt(() => {
      if (checkRealDir(folder)) accessSync(folder, constants.W_OK | constants.X_OK);
    });
  }
  for (const file of [paths.auditLog, join(paths.root, ".gitignore")]) {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st && !st.isFile()) problems.push(`refused ${file}: ${st.isSymbolicLink() ? "a symbolic link" : "not a regular file"} where a file is expected`);
    else if (st && st.nlink > 1) problems.push(`refused ${file}: a file with ${st.nlink} hard links`);
    else if (st) attempt(() => accessSync(file, constants.W_OK));
  }
  return problems;
}
