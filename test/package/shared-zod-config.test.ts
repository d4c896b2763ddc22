import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect, test } from "vitest";
import { PLUGIN_ENTRY, REPO_ROOT } from "../harness/paths.ts";

/**
 * Zod keeps its configuration on `globalThis.__zod_globalConfig`, one object every zod 4 copy in a process shares —
 * inside OpenCode, the host's own. Governance builds its schemas without zod's JIT (governance/zod.ts), and must give
 * the host its setting back. A fresh process plays the host: the repository's zod stands for the host's copy, the
 * shipped bundle (dist/plugin/index.js, its own zod inlined) is loaded beside it, started and given a session.
 * Counted: parsers zod compiles with `new Function` (its JIT), by the host's schemas and by governance's.
 */
const SCRIPT = `
import { config, object, string } from "zod";
let compiled = 0;
const F = globalThis.Function;
globalThis.Function = new Proxy(F, {
  construct: (t, a, n) => (compiled++, Reflect.construct(t, a, n)),
  apply: (t, self, a) => (compiled++, Reflect.apply(t, self, a)),
});
object({ before: string() }).parse({ before: "host schema built before the plugin" });
const jitlessBefore = config().jitless ?? null;
const { default: plugin } = await import(process.env.PLUGIN_URL);
const jitlessAfter = config().jitless ?? null;
let from = compiled;
object({ after: string() }).parse({ after: "host schema built after the plugin" });
const host = compiled - from;
from = compiled;
const dir = process.env.PROJECT_DIR;
const hooks = await plugin.server({ directory: dir, worktree: dir, client: {}, project: {}, serverUrl: new URL("http://127.0.0.1:1") });
const id = "ses_zod000000000000000000000001";
await hooks.event({ event: { type: "session.created", properties: { sessionID: id, info: { id, agent: "build" } } } });
await hooks["tool.execute.before"]({ tool: "read", sessionID: id, callID: "c1" }, { args: { filePath: "a.md" } });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: id } } });
await hooks.dispose();
const governance = compiled - from;
const record = JSON.parse((await import("node:fs")).readFileSync(dir + "/.opencode/governance/sessions/" + id + ".json", "utf8"));
console.log(JSON.stringify({ jitlessBefore, jitlessAfter, host, governance, state: record.state }));
`;

test("the host's zod keeps its JIT after governance loads; governance's own schemas stay without it", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ocg-zod-"));
  try {
    const project = path.join(root, "project");
    fs.mkdirSync(project);
    spawnSync("git", ["init", "-q", project]);
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, PLUGIN_URL: pathToFileURL(PLUGIN_ENTRY).href, PROJECT_DIR: project, HOME: root, XDG_CONFIG_HOME: path.join(root, "config") },
    });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split("\n").at(-1) as string);
    // The session went through governance's schemas (record written and read back under them).
    expect(out).toMatchObject({ jitlessBefore: null, jitlessAfter: null, state: "between_turn" });
    expect(out.host, "the host's schema built after the plugin compiles its fast path").toBeGreaterThan(0);
    expect(out.governance, "governance's schemas compile nothing").toBe(0);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
