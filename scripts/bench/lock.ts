import { spawn } from "node:child_process";

/**
 * Holds `flock <file>` (the machine's shared lock for real-host runs) until the returned release is called, so a long
 * bench takes the lock round by round instead of for its whole run.
 */
export function acquireLock(file: string | undefined): Promise<() => void> {
  if (!file) return Promise.resolve(() => undefined);
  return new Promise((resolve, reject) => {
    const holder = spawn("flock", [file, "-c", "echo locked; read _"], { stdio: ["pipe", "pipe", "inherit"] });
    holder.on("error", reject);
    holder.stdout.once("data", () => resolve(() => holder.stdin.end()));
  });
}
