import { execFileSync } from "node:child_process";
import { link, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AuditLog } from "../../../governance/storage/audit-log.ts";
import { ensureGovernanceDir, governancePaths } from "../../../governance/storage/governance-paths.ts";
import { checkGovernanceRoot, openForAppend, readRegularFile } from "../../../governance/storage/safe-fs.ts";
import { createFakeClock } from "../../../governance/time/clock.ts";
import { makeTempDir, tempDirEach } from "../helpers.ts";

describe("safe-fs", () => {
  let dir: string;
  tempDirEach((d) => (dir = d));

  it("readRegularFile refuses a symlink, a FIFO and a directory without blocking, and bounds the size", async () => {
    await writeFile(join(dir, "real"), "hello");
    await symlink(join(dir, "real"), join(dir, "link"));
    execFileSync("mkfifo", [join(dir, "fifo")]);
    await mkdir(join(dir, "folder"));
    await writeFile(join(dir, "big"), Buffer.alloc(2048, 0x61));
    expect(await readRegularFile(join(dir, "real"))).toBe("hello");
    await expect(readRegularFile(join(dir, "link"))).rejects.toMatchObject({ code: "EUNSAFEPATH", message: expect.stringContaining("symbolic link") });
    await expect(readRegularFile(join(dir, "fifo"))).rejects.toMatchObject({ code: "EUNSAFEPATH", message: expect.stringContaining("FIFO") });
    await expect(readRegularFile(join(dir, "folder"))).rejects.toMatchObject({ code: "EUNSAFEPATH" });
    await expect(readRegularFile(join(dir, "big"), 1024)).rejects.toMatchObject({ code: "EFBIG" });
    await expect(readRegularFile("/dev/zero")).rejects.toMatchObject({ code: "EUNSAFEPATH", message: expect.stringContaining("device") });
  });

  it("openForAppend refuses a symlink, a FIFO with no reader, and a hard-linked file; creates 0600", async () => {
    const victim = join(dir, "victim");
    await writeFile(victim, "original\n");
    await symlink(victim, join(dir, "link"));
    await link(victim, join(dir, "hard"));
    execFileSync("mkfifo", [join(dir, "fifo")]);
    for (const name of ["link", "hard", "fifo"]) await expect(openForAppend(join(dir, name))).rejects.toMatchObject({ code: "EUNSAFEPATH" });
    expect(await readFile(victim, "utf8")).toBe("original\n");
    const handle = await openForAppend(join(dir, "new.log"));
    await handle.close();
    expect((await stat(join(dir, "new.log"))).mode & 0o777).toBe(0o600);
  });

  it("the state folder and its sub-folders are created owner-only (0700), the .gitignore 0600", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    for (const folder of [paths.root, paths.sessions, paths.queues, paths.quarantine, paths.archive]) {
      expect(((await stat(folder)).mode & 0o777).toString(8)).toBe("700");
    }
    expect(((await stat(join(paths.root, ".gitignore"))).mode & 0o777).toString(8)).toBe("600");
  });

  it("state left by an older release (0755/0644) is made owner-only; a symlink is never chmod-ed through", async () => {
    const paths = governancePaths(dir);
    for (const folder of [paths.root, paths.sessions, paths.queues, paths.quarantine, paths.archive]) await mkdir(folder, { recursive: true, mode: 0o755 });
    await writeFile(paths.auditLog, "", { mode: 0o644 });
    await writeFile(join(paths.root, ".gitignore"), "*\n", { mode: 0o644 });
    const { dir: outside, cleanup: done } = await makeTempDir("gov-outside-");
    try {
      await writeFile(join(outside, "shared"), "x", { mode: 0o644 });
      const other = governancePaths(join(dir, "other"));
      await mkdir(other.root, { recursive: true, mode: 0o755 });
      await symlink(join(outside, "shared"), other.auditLog);
      await ensureGovernanceDir(other);
      await ensureGovernanceDir(paths);
      for (const folder of [paths.root, paths.sessions, paths.queues, paths.quarantine, paths.archive]) {
        expect(((await stat(folder)).mode & 0o777).toString(8)).toBe("700");
      }
      expect(((await stat(paths.auditLog)).mode & 0o777).toString(8)).toBe("600");
      expect(((await stat(join(outside, "shared"))).mode & 0o777).toString(8)).toBe("644");
    } finally {
      await done();
    }
  });

  it("checkGovernanceRoot accepts .opencode as a symlink inside the project and refuses one leading outside", async () => {
    const { dir: outside, cleanup: done } = await makeTempDir("gov-outside-");
    try {
      await mkdir(join(dir, "real-opencode"));
      await symlink(join(dir, "real-opencode"), join(dir, ".opencode"));
      expect(() => checkGovernanceRoot(governancePaths(dir).root)).not.toThrow();
      const other = join(dir, "p2");
      await mkdir(other);
      await symlink(outside, join(other, ".opencode"));
      expect(() => checkGovernanceRoot(governancePaths(other).root)).toThrow(/leading outside the project/);
    } finally {
      await done();
    }
  });

  it("an audit line torn by a failed write does not glue to the next one", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    await writeFile(paths.auditLog, '{"at":1,"type":"plugin_started"}\n{"at":2,"type":"sess');
    const audit = new AuditLog({ paths, clock: createFakeClock(3) });
    expect(await audit.append("session_created", { sessionId: "ses_x" })).toEqual({ ok: true });
    const lines = (await readFile(paths.auditLog, "utf8")).split("\n");
    expect(lines).toEqual(['{"at":1,"type":"plugin_started"}', '{"at":2,"type":"sess', '{"at":3,"type":"session_created","sessionId":"ses_x"}', ""]);
    expect((await audit.read()).map((e) => e.type)).toEqual(["plugin_started", "session_created"]);
  });
});
