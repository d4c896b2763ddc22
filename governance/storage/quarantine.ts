import { randomBytes } from "node:crypto";
import { mkdir, rename } from "node:fs/promises";
import { basename, join } from "node:path";
import { writeFileAtomic } from "./atomic-write.ts";
import { checkRealDir, DIR_MODE } from "./safe-fs.ts";
import type { Clock } from "../time/clock.ts";
import type { GovernancePaths } from "./governance-paths.ts";

/**
 * Something on disk governance could not use. Reported through an `onProblem` callback, once per file: the file
 * itself has been moved aside (`quarantined`) or could not be touched (`io_error`).
 */
export type StoreProblem =
  | { kind: "quarantined"; file: string; movedTo: string; reason: string; at: number }
  | { kind: "io_error"; file: string; reason: string; at: number };

export type QuarantineResult = { ok: true; movedTo: string; problem: StoreProblem } | { ok: false; reason: string; gone: boolean };

/**
 * Moves a bad file to `quarantine/<prefix><name>.<at>.<random>` with a sibling `….reason.json` saying why and when.
 * The bad bytes are never emptied or rewritten: a rename keeps them for a human to inspect. `gone: true` means the
 * file vanished first (another process quarantined or replaced it); the caller then reports nothing.
 */
export async function quarantineFile(paths: GovernancePaths, file: string, reason: string, clock: Clock, prefix = ""): Promise<QuarantineResult> {
  const at = clock.now();
  const name = `${prefix}${basename(file)}.${at}.${randomBytes(3).toString("hex")}`;
  const movedTo = join(paths.quarantine, name);
  try {
    // Never move a file through a planted symlink: the quarantine folder must be a real folder (or missing).
    if (!checkRealDir(paths.quarantine)) await mkdir(paths.quarantine, { mode: DIR_MODE });
    await rename(file, movedTo);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, reason: `could not move ${file} to quarantine: ${String(error)}`, gone: code === "ENOENT" };
  }
  const note = { schemaVersion: 1, originalPath: file, reason, quarantinedAt: at, pid: process.pid };
  await writeFileAtomic(`${movedTo}.reason.json`, `${JSON.stringify(note, null, 2)}\n`).catch(() => undefined);
  return { ok: true, movedTo, problem: { kind: "quarantined", file, movedTo, reason, at } };
}

/** The first lines of defence shared by every JSON file governance reads: empty and binary garbage. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (text.trim() === "") return { ok: false, reason: "empty file" };
  if (text.includes("\u0000")) return { ok: false, reason: "file contains NUL bytes (torn or pre-allocated write)" };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
