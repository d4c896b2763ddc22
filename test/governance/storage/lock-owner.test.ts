import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { isProcessAlive } from "../../../governance/storage/atomic-write.ts";
import { isZombieStat, ownerIsGone, startTimeFromStat, thisProcess } from "../../../governance/storage/lock-owner.ts";

let holder: ChildProcess | undefined;
afterEach(() => {
  holder?.kill("SIGKILL");
  holder = undefined;
});

/**
 * A real zombie: a shell starts a short-lived process, prints its pid, and becomes `sleep`, which never reaps it — as a
 * tmux pane kept open after its program exited does (seen in a full CI run: the TUI's lock waited on its zombie).
 */
async function zombie(): Promise<{ pid: number; start: string | null }> {
  holder = spawn("sh", ["-c", "sleep 0.3 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
  const pid = await new Promise<number>((resolve) => holder!.stdout!.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
  const start = startTimeFromStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  for (let i = 0; i < 100 && !isZombieStat(readFileSync(`/proc/${pid}/stat`, "utf8")); i++) await new Promise((r) => setTimeout(r, 50));
  return { pid, start };
}

describe.skipIf(process.platform !== "linux")("a lock holder that has exited but is not reaped yet (a zombie)", () => {
  it("is gone: its lock is taken over at once, its temp files and folders swept", async () => {
    const z = await zombie();
    expect(isZombieStat(readFileSync(`/proc/${z.pid}/stat`, "utf8"))).toBe(true);
    expect(await ownerIsGone({ host: thisProcess().host, pid: z.pid, start: z.start })).toBe(true);
    expect(await ownerIsGone({ host: thisProcess().host, pid: z.pid, start: null })).toBe(true);
    expect(isProcessAlive(z.pid)).toBe(false);
  });

  it("a live process is not gone (the shell's sleep), nor is this one", async () => {
    await zombie();
    const live = holder!.pid!;
    const start = startTimeFromStat(readFileSync(`/proc/${live}/stat`, "utf8"));
    expect(await ownerIsGone({ host: thisProcess().host, pid: live, start })).toBe(false);
    expect(isProcessAlive(live)).toBe(true);
    expect(await ownerIsGone(thisProcess())).toBe(false);
  });
});
