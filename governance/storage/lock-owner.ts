import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";

/**
 * Who holds a lock: the host, the pid, and the process's start time (field 22 of `/proc/<pid>/stat`, clock ticks
 * since boot; `null` where there is no /proc). The start time tells a dead holder from a new process that got its
 * pid back (pid reuse): same pid, later start = the holder is gone.
 */
export type LockOwner = { host: string; pid: number; start: string | null };

let self: (LockOwner & { text: string }) | undefined;

/** This process as a lock owner (computed once: one small /proc read). */
export function thisProcess(): LockOwner & { text: string } {
  if (!self) {
    const owner = { host: hostname(), pid: process.pid, start: startTimeSync(process.pid) };
    self = { ...owner, text: formatOwner(owner) };
  }
  return self;
}

export function formatOwner(owner: LockOwner): string {
  return `${JSON.stringify(owner)}\n`;
}

/** The owner file's text, or undefined when it is not one (an empty file while being written, a hand-made folder). */
export function parseOwner(text: string): LockOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.host !== "string" || !Number.isInteger(v.pid) || (v.pid as number) <= 0) return undefined;
    return { host: v.host, pid: v.pid as number, start: typeof v.start === "string" ? v.start : null };
  } catch {
    return undefined;
  }
}

/**
 * True only when the owner is certainly dead: on this host, and its pid runs no process (`ESRCH`) or a process that
 * started at another time. Another host, a pid owned by another user (`EPERM`), or an unknown start time: not
 * provably dead — the caller falls back to the lock's staleness.
 */
export async function ownerIsGone(owner: LockOwner): Promise<boolean> {
  const early = goneWithoutStat(owner);
  if (early !== undefined) return early;
  let stat: string;
  try {
    stat = await readFile(`/proc/${owner.pid}/stat`, "utf8");
  } catch {
    return false;
  }
  return goneByStat(owner, stat);
}

/**
 * {@link ownerIsGone} without waiting, for a check inside a record's locked update (two small /proc reads). Only
 * "certainly dead" is true, as there.
 */
export function ownerIsGoneSync(owner: LockOwner): boolean {
  const early = goneWithoutStat(owner);
  if (early !== undefined) return early;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${owner.pid}/stat`, "utf8");
  } catch {
    return false;
  }
  return goneByStat(owner, stat);
}

/** The answer when it needs no /proc read (another machine, this process, a pid that no longer exists), else undefined. */
function goneWithoutStat(owner: LockOwner): boolean | undefined {
  if (owner.host !== thisProcess().host) return false;
  if (owner.pid === process.pid) return owner.start !== null && owner.start !== thisProcess().start;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  return undefined;
}

/** A live pid's /proc stat: gone when a zombie, or when the pid now belongs to a process started at another time. */
function goneByStat(owner: LockOwner, stat: string): boolean {
  // A zombie has exited; its pid lives on only until its parent reaps it (a tmux pane kept open, an editor that
  // does not wait): it holds nothing any more.
  if (isZombieStat(stat)) return true;
  const now = startTimeFromStat(stat);
  return owner.start !== null && now !== null && now !== owner.start;
}

/** State Z (zombie) or X (dead) in /proc/<pid>/stat: the process has exited, only its pid is left. */
export function isZombieStat(stat: string): boolean {
  const state = statFields(stat)[0];
  return state === "Z" || state === "X";
}

/** The fields of /proc/<pid>/stat after the parenthesised command name (which may hold spaces): [0] is field 3, the state. */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
export function startTimeFromStat(stat: string): string | null {
  return statFields(stat)[19] ?? null;
}

function startTimeSync(pid: number): string | null {
  try {
    return startTimeFromStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return null;
  }
}
