import { execFileSync } from "node:child_process";
import fs from "fs-extra";
import path from "node:path";
import { AuditLog } from "../governance/storage/audit-log.ts";
import { systemClock } from "../governance/time/clock.ts";
import { MAX_CONFIG_BYTES } from "../governance/config/config.ts";
import { readConfig } from "./read-config.ts";
import { governancePaths } from "../governance/storage/governance-paths.ts";
import { stateFolderProblems } from "../governance/storage/state-health.ts";
import { configCandidates, globalConfigDir, listsPlugin, readOpencodeConfig } from "./opencode-config.ts";
import { PLUGIN_NAME } from "./package-files.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };
type Check = { ok: boolean; warn?: boolean; text: string };

/**
 * Where OpenCode would find the plugin: a `plugin` entry in any config file it reads (project `opencode.jsonc` /
 * `opencode.json`, `.opencode/opencode.json(c)`, the global ones, `OPENCODE_CONFIG`), read as JSONC like OpenCode
 * does, or a local plugin file. A config file OpenCode cannot parse is a failure of its own: OpenCode refuses it too.
 */
function pluginChecks(dir: string, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [];
  const files = [...configCandidates("project", dir, env), ...configCandidates("global", dir, env)];
  if (env.OPENCODE_CONFIG) files.push(path.resolve(dir, env.OPENCODE_CONFIG));
  let listed: string | undefined;
  for (const file of files) {
    if (!fs.existsSync(file)) continue;
    const read = readOpencodeConfig(file);
    if (!read.ok) checks.push({ ok: false, text: `OpenCode cannot read its config: ${read.reason}` });
    else if (!listed && listsPlugin(read.value)) listed = file;
  }
  if (listed) return [{ ok: true, text: `plugin listed in ${path.relative(dir, listed).startsWith("..") ? listed : path.relative(dir, listed)}` }, ...checks];
  for (const base of [path.join(dir, ".opencode"), globalConfigDir(env)]) {
    for (const sub of ["plugin", "plugins"]) {
      const folder = path.join(base, sub);
      if (!fs.existsSync(folder)) continue;
      for (const f of fs.readdirSync(folder)) {
        if (/\.(ts|js|mjs)$/.test(f) && /governance/.test(fs.readFileSync(path.join(folder, f), "utf8"))) {
          return [{ ok: true, text: `local plugin ${path.join(folder, f)}` }, ...checks];
        }
      }
    }
  }
  return [
    { ok: false, text: `plugin not installed: run \`opencode-governance init\` (or add "${PLUGIN_NAME}" to the "plugin" list of opencode.json)` },
    ...checks,
  ];
}

/** The editor schema the YAML's first line names, when it is a relative file that is not there. */
function schemaCheck(configFile: string): Check | undefined {
  // A FIFO, a symlink (to /dev/zero) or a huge file is refused by loadConfig; never read it here either.
  const st = fs.lstatSync(configFile, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > MAX_CONFIG_BYTES) return undefined;
  const first = fs.readFileSync(configFile, "utf8").split("\n", 1)[0] ?? "";
  const ref = /^#\s*yaml-language-server:\s*\$schema=(\S+)/.exec(first)?.[1];
  if (!ref || /^[a-z]+:\/\//i.test(ref)) return undefined;
  const schema = path.resolve(path.dirname(configFile), ref);
  return fs.existsSync(schema)
    ? { ok: true, text: `editor schema ${path.basename(schema)} present` }
    : { ok: true, warn: true, text: `editor schema ${ref} missing (completion in editors): run \`opencode-governance init\` to install it` };
}

/**
 * Checks what a user cannot see: OpenCode loads a broken plugin silently (nothing in its logs), so the proof that
 * the plugin runs is its own `plugin_started` line in the audit log.
 */
export async function runDoctor(dir: string, io: Io, env: NodeJS.ProcessEnv = process.env, opts: { json?: boolean } = {}): Promise<number> {
  const paths = governancePaths(dir);
  const checks: Check[] = pluginChecks(dir, env);

  const config = await readConfig(paths.configFile);
  if (config.source === "defaults" && !fs.existsSync(paths.configFile)) {
    checks.push({ ok: true, warn: true, text: `no ${path.relative(dir, paths.configFile)} yet: the plugin writes it with the defaults at its first start` });
  } else if (config.problems.length === 0) checks.push({ ok: true, text: `config ${path.relative(dir, paths.configFile)} is valid` });
  for (const p of config.problems) checks.push({ ok: false, text: `config line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.message}` });
  const schema = schemaCheck(paths.configFile);
  if (schema) checks.push(schema);

  for (const p of stateFolderProblems(paths)) checks.push({ ok: false, text: `state folder: ${p}` });

  const started = (await new AuditLog({ paths, clock: systemClock }).read()).filter((e) => e.type === "plugin_started").at(-1);
  checks.push(
    started
      ? { ok: true, text: `plugin loaded in OpenCode (last start ${new Date(started.at).toISOString()})` }
      : { ok: false, warn: true, text: "no record of the plugin ever starting: start OpenCode here once; if this stays, the plugin failed to load" },
  );

  const ignoreFile = path.join(paths.root, ".gitignore");
  if (fs.existsSync(ignoreFile)) {
    // git check-ignore: 0 ignored, 1 not ignored, 128 not a git repository (nothing to snapshot then).
    let status = 0;
    try {
      execFileSync("git", ["check-ignore", "-q", path.join(paths.root, "sessions", "probe.json")], { cwd: dir, stdio: "ignore" });
    } catch (error) {
      status = (error as { status?: number }).status ?? 128;
    }
    if (status === 0) checks.push({ ok: true, text: "state folder is git-ignored" });
    else if (status === 1) checks.push({ ok: false, text: "state folder is NOT git-ignored: OpenCode will snapshot it at every step" });
    else checks.push({ ok: true, warn: true, text: "not a git repository: git-ignore not checked" });
  } else checks.push({ ok: true, warn: true, text: "state folder not created yet" });

  const failed = checks.filter((c) => !c.ok && !c.warn).length;
  if (opts.json) {
    // `doctor --json` (docs/cli.md): version 1, each check "ok" | "warn" | "fail" with its text.
    const status = (c: Check) => (c.warn ? "warn" : c.ok ? "ok" : "fail");
    io.out(JSON.stringify({ version: 1, ok: failed === 0, checks: checks.map((c) => ({ status: status(c), text: c.text })) }, null, 2));
    return failed === 0 ? 0 : 1;
  }
  for (const c of checks) io.out(`${c.ok ? (c.warn ? "!" : "✓") : c.warn ? "!" : "✗"} ${c.text}`);
  return failed === 0 ? 0 : 1;
}
