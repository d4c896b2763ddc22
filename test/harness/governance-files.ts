import fs from "fs-extra";
import path from "node:path";
import { waitFor } from "./opencode-http.ts";

/** Read-only views of what the plugin wrote in a test project, for assertions. */
export function auditEvents(governanceDir: string): { at: number; type: string; sessionId?: string; [k: string]: unknown }[] {
  const file = path.join(governanceDir, "audit.log");
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

export function sessionRecord(governanceDir: string, id: string): Record<string, any> | undefined {
  const file = path.join(governanceDir, "sessions", `${id}.json`);
  return fs.existsSync(file) ? (fs.readJsonSync(file) as Record<string, any>) : undefined;
}

/** Waits until the session's record on disk satisfies `ready`, and returns that record. */
export function waitForRecord(
  governanceDir: string,
  id: string,
  ready: (record: Record<string, any>) => boolean,
  what: string,
  timeoutMs?: number,
): Promise<Record<string, any>> {
  return waitFor(
    () => {
      const r = sessionRecord(governanceDir, id);
      return r && ready(r) ? r : undefined;
    },
    what,
    timeoutMs,
  );
}

export function allSessionRecords(governanceDir: string): Record<string, any>[] {
  const dir = path.join(governanceDir, "sessions");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => fs.readJsonSync(path.join(dir, f)) as Record<string, any>);
}

/** Rewrites a record on disk, e.g. to move its timestamps into the past. */
export function patchSessionRecord(governanceDir: string, id: string, patch: (r: Record<string, any>) => void): void {
  const file = path.join(governanceDir, "sessions", `${id}.json`);
  const r = fs.readJsonSync(file) as Record<string, any>;
  patch(r);
  fs.writeJsonSync(file, r);
}

/** Every lock folder (and aside copy) left under the governance folder. */
export function locksLeft(governanceDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name.includes(".lock")) out.push(path.relative(governanceDir, path.join(dir, e.name)));
      else if (e.isDirectory()) walk(path.join(dir, e.name));
    }
  };
  walk(governanceDir);
  return out;
}
