import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive, isTempName, sweepTempFiles, tempNameFor, writeFileAtomic } from "../../../governance/storage/atomic-write.ts";
import { tempDirEach } from "../helpers.ts";

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("writeFileAtomic", () => {
  let dir: string;
  tempDirEach((d) => (dir = d));

  it("creates and replaces a file, leaving no temp files behind", async () => {
    const file = join(dir, "record.json");
    await writeFileAtomic(file, "first");
    await writeFileAtomic(file, new TextEncoder().encode("second"));
    expect(await readFile(file, "utf8")).toBe("second");
    expect(await readdir(dir)).toEqual(["record.json"]);
  });

  it("removes its temp file when the write fails, and throws", async () => {
    const target = join(dir, "occupied");
    await mkdir(join(target, "child"), { recursive: true });
    await expect(writeFileAtomic(target, "data")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["occupied"]);
    await expect(writeFileAtomic(join(dir, "missing", "x.json"), "data")).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual(["occupied"]);
  });

  it("concurrent writers to one file: the result is exactly one writer's full content", async () => {
    const file = join(dir, "contended.json");
    const payloads = Array.from({ length: 40 }, (_, i) => JSON.stringify({ writer: i, body: String(i).repeat(5_000) }));
    await Promise.all(payloads.map((payload) => writeFileAtomic(file, payload)));
    expect(payloads).toContain(await readFile(file, "utf8"));
    expect(await readdir(dir)).toEqual(["contended.json"]);
  });
});

describe("temp file recovery", () => {
  let dir: string;
  tempDirEach((d) => (dir = d));

  it("temp names are hidden, carry the pid, and are recognized", () => {
    const name = tempNameFor("/x/ses_abcdefgh.json");
    expect(name.startsWith(".ses_abcdefgh.json.")).toBe(true);
    expect(name).toContain(`.${process.pid}.`);
    expect(isTempName(name)).toBe(true);
    expect(isTempName("ses_abcdefgh.json")).toBe(false);
  });

  it("sweeps temp files of dead writers and keeps those of live ones", async () => {
    const dead = deadPid();
    expect(isProcessAlive(dead)).toBe(false);
    expect(isProcessAlive(process.pid)).toBe(true);
    const abandoned = `.ses_abcdefgh.json.${dead}.0123456789ab.tmp`;
    const inFlight = `.ses_abcdefgh.json.${process.pid}.0123456789ab.tmp`;
    for (const name of [abandoned, inFlight, "ses_abcdefgh.json", "notes.tmp"]) await writeFile(join(dir, name), "x");
    expect(await sweepTempFiles(dir)).toEqual([abandoned]);
    expect((await readdir(dir)).sort()).toEqual([inFlight, "notes.tmp", "ses_abcdefgh.json"].sort());
    expect(await sweepTempFiles(join(dir, "nope"))).toEqual([]);
  });
});
