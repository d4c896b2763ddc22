import { execFileSync } from "node:child_process";
import fs from "fs-extra";
import path from "node:path";
import { AuditLog } from "../governance/storage/audit-log.ts";
import { systemClock } from "../governance/time/clock.ts";
import { readConfig } from "./read-config.ts";
import { governancePaths } from "../governance/storage/governance-paths.ts";
import { stateFolderProblems } from "../governance/storage/state-health.ts";
import { PLUGIN_NAME } from "./package-files.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };
type Check = { ok: boolean; warn?: boolean; text: string };

function pluginInstalled(dir: string): Check {
  const configPath = path.join(dir, "opencode.json");
  try {
    const config = fs.existsSync(configPath) ? (fs.readJsonSync(configPath) as { plugin?: unknown[] }) : {};
    if ((config.plugin ?? []).some((p) => p === PLUGIN_NAME || (Array.isArray(p) && p[0] === PLUGIN_NAME))) {
      return { ok: true, text: `plugin listed in opencode.json` };
    }
  } catch {
    // fall through to the local-plugin check
  }
  for (const sub of ["plugin", "plugins"]) {
    const folder = path.join(dir, ".opencode", sub);
    if (!fs.existsSync(folder)) continue;
    for (const f of fs.readdirSync(folder)) {
      if (/\.(ts|js|mjs)$/.test(f) && /governance/.test(fs.readFileSync(path.join(folder, f), "utf8"))) {
        return { ok: true, text: `local plugin ${path.join(".opencode", sub, f)}` };
      }
    }
  }
  return { ok: false, text: `plugin not installed: run \`opencode-governance init\` (or add "${PLUGIN_NAME}" to opencode.json "plugin")` };
}

/**
 * Checks what a user cannot see: OpenCode loads a broken plugin silently (nothing in its logs), so the proof that
 * the plugin runs is its own `plugin_started` line in the audit log.
 */
export async function runDoctor(dir: string, io: Io): Promise<number> {
  const paths = governancePaths(dir);
  const checks: Check[] = [pluginInstalled(dir)];

  const config = await readConfig(paths.configFile);
  if (config.source === "defaults" && !fs.existsSync(paths.configFile)) {
    checks.push({ ok: true, warn: true, text: `no ${path.relative(dir, paths.configFile)} yet: the plugin writes it with the defaults at its first start` });
  } else if (config.problems.length === 0) checks.push({ ok: true, text: `config ${path.relative(dir, paths.configFile)} is valid` });
  for (const p of config.problems) checks.push({ ok: false, text: `config line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.message}` });

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

  let failed = 0;
  for (const c of checks) {
    io.out(`${c.ok ? (c.warn ? "!" : "✓") : c.warn ? "!" : "✗"} ${c.text}`);
    if (!c.ok && !c.warn) failed++;
  }
  return failed === 0 ? 0 : 1;
}
