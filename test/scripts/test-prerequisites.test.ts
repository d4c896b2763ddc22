import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { APT_GET, absentPackages, planInstall, SUDO } from "../../scripts/test-prerequisites.ts";
import { REPO_ROOT } from "../harness/paths.ts";

/**
 * Issue 28 §6: the prerequisites step of `npm test` may run as root, so it runs only Debian's own apt-get and sudo by
 * absolute path, in a clean environment, and sudo never prompts. A `node_modules/.bin/apt-get` (what `npm test`
 * puts first on PATH) or a `sudo` on PATH is never run, and APT_CONFIG is not passed through.
 */
const all = () => true;
const only =
  (...files: string[]) =>
  (f: string) =>
    files.includes(f);

describe("absentPackages", () => {
  test("bubblewrap is a prerequisite, found as Debian installs it (issue 41: the confinement tests)", () => {
    expect(absentPackages(only("/usr/bin/tmux", "/usr/bin/chromium", "/usr/lib/faketime/libfaketime.so.1"))).toEqual(["bubblewrap"]);
    expect(absentPackages(only("/usr/bin/tmux", "/usr/bin/chromium", "/usr/lib/faketime/libfaketime.so.1", "/usr/bin/bwrap"))).toEqual([]);
  });
});

describe("planInstall", () => {
  test("as root: Debian's apt-get by absolute path, nothing from PATH", () => {
    expect(planInstall({ absent: ["chromium"], uid: 0, noApt: false, exists: all })).toEqual({
      kind: "run",
      as: "root",
      commands: [
        [APT_GET, "update", "-qq"],
        [APT_GET, "install", "-y", "-qq", "--no-install-recommends", "chromium"],
      ],
    });
  });
  test("as a user: /usr/bin/sudo -n (never a password prompt), then apt-get by absolute path", () => {
    const plan = planInstall({ absent: ["tmux", "faketime"], uid: 1000, noApt: false, exists: all });
    expect(plan).toMatchObject({ kind: "run", as: "sudo" });
    for (const c of (plan as { commands: string[][] }).commands) expect(c.slice(0, 3)).toEqual([SUDO, "-n", APT_GET]);
  });
  test("when it cannot, it says why and what it would run", () => {
    expect(planInstall({ absent: ["tmux"], uid: 1000, noApt: false, exists: only(APT_GET) })).toEqual({
      kind: "cannot",
      why: "not root and no /usr/bin/sudo",
      commands: [
        ["sudo", APT_GET, "update", "-qq"],
        ["sudo", APT_GET, "install", "-y", "-qq", "--no-install-recommends", "tmux"],
      ],
    });
    expect(planInstall({ absent: ["tmux"], uid: 0, noApt: false, exists: only(SUDO) })).toMatchObject({
      kind: "cannot",
      why: "no /usr/bin/apt-get (not a Debian system)",
    });
    expect(planInstall({ absent: ["tmux"], uid: 0, noApt: true, exists: all }).kind).toBe("off");
    expect(planInstall({ absent: [], uid: 0, noApt: false, exists: all }).kind).toBe("nothing");
  });
});

describe("the real script under a hostile PATH and environment", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-prereq-"));
  const bin = path.join(dir, "bin");
  const marker = path.join(dir, "ran");
  fs.mkdirSync(bin);
  for (const name of ["apt-get", "sudo"])
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho "${name} $* APT_CONFIG=$APT_CONFIG" >> '${marker}'\nexit 0\n`, { mode: 0o755 });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.skipIf(absentPackages().length === 0 || !fs.existsSync(APT_GET))(
    "a PATH apt-get/sudo is never run; --dry-run names /usr/bin/apt-get and a clean environment",
    () => {
      const res = spawnSync(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "scripts", "test-prerequisites.ts"), "--dry-run"], {
        cwd: REPO_ROOT,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, APT_CONFIG: path.join(dir, "evil.conf"), OPENCODE_GOVERNANCE_NO_APT: "" },
        encoding: "utf8",
        timeout: 30_000,
      });
      console.log(res.stdout);
      expect(fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "").toBe("");
      expect(res.stdout).toContain(`${APT_GET} install`);
      expect(res.stdout).toContain("with only this environment: PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C");
      expect(res.stdout).not.toContain("APT_CONFIG");
    },
  );
});
