import { existsSync } from "node:fs";
import { readFile, rm, writeFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureGovernanceDir, GITIGNORE_CONTENT, governancePaths, sessionFilePath, sessionScopedPath } from "../../../governance/storage/governance-paths.ts";
import { HOSTILE_IDS, tempDirEach } from "../helpers.ts";

describe("governancePaths", () => {
  it("lays out the state folder under .opencode/governance and the config next to it", () => {
    const paths = governancePaths("/work/project");
    expect(paths).toEqual({
      root: "/work/project/.opencode/governance",
      sessions: "/work/project/.opencode/governance/sessions",
      queues: "/work/project/.opencode/governance/queues",
      quarantine: "/work/project/.opencode/governance/quarantine",
      archive: "/work/project/.opencode/governance/archive",
      auditLog: "/work/project/.opencode/governance/audit.log",
      configFile: "/work/project/.opencode/governance.yaml",
    });
  });
});

describe("sessionFilePath", () => {
  const paths = governancePaths("/work/project");

  it("maps a session id to sessions/<id>.json", () => {
    expect(sessionFilePath(paths, "ses_3f9a2b7c1d8e4f60a1b2c3d4e5")).toEqual({
      ok: true,
      path: "/work/project/.opencode/governance/sessions/ses_3f9a2b7c1d8e4f60a1b2c3d4e5.json",
    });
  });

  it.each(HOSTILE_IDS.map((id) => [JSON.stringify(id) ?? String(id), id]))("rejects hostile id %s", (_label, id) => {
    const result = sessionFilePath(paths, id);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/session id/);
  });

  it("also refuses a suffix that would escape the folder (containment check behind the pattern)", () => {
    expect(sessionScopedPath("/a/b", "ses_abcdefgh", "/../../x").ok).toBe(false);
    expect(sessionScopedPath("/a/b", "ses_abcdefgh", "").ok).toBe(true);
  });
});

describe("ensureGovernanceDir", () => {
  let dir: string;
  tempDirEach((d) => (dir = d));

  it("writes a .gitignore of '*' and creates the sub-folders", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    expect(await readFile(join(paths.root, ".gitignore"), "utf8")).toBe(GITIGNORE_CONTENT);
    expect(GITIGNORE_CONTENT.split("\n")).toContain("*");
    expect((await readdir(paths.root)).sort()).toEqual([".gitignore", "archive", "quarantine", "queues", "sessions"]);
    expect(existsSync(paths.configFile)).toBe(false);
  });

  it("is idempotent, and recreates the folder (gitignore first) after it was deleted", async () => {
    const paths = governancePaths(dir);
    await Promise.all([ensureGovernanceDir(paths), ensureGovernanceDir(paths), ensureGovernanceDir(paths)]);
    await ensureGovernanceDir(paths);
    await rm(paths.root, { recursive: true });
    await ensureGovernanceDir(paths);
    expect(await readFile(join(paths.root, ".gitignore"), "utf8")).toBe(GITIGNORE_CONTENT);
    expect(existsSync(paths.sessions)).toBe(true);
  });

  it("keeps a user's non-empty .gitignore and repairs an empty one", async () => {
    const paths = governancePaths(dir);
    await ensureGovernanceDir(paths);
    const gitignore = join(paths.root, ".gitignore");
    await writeFile(gitignore, "*\n!README.md\n");
    await rm(gitignore);
    await writeFile(gitignore, "");
    await ensureGovernanceDir(paths);
    expect(await readFile(gitignore, "utf8")).toBe(GITIGNORE_CONTENT);

    const other = governancePaths(join(dir, "other"));
    await ensureGovernanceDir(other);
    await writeFile(join(other.root, ".gitignore"), "*\n!README.md\n");
    await ensureGovernanceDir(other);
    expect(await readFile(join(other.root, ".gitignore"), "utf8")).toBe("*\n!README.md\n");
  });
});
