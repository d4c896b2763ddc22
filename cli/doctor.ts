import { execFileSync } from "node:child_process";
import { confinementView } from "./confinement-view.ts";
import fs from "fs-extra";
import path from "node:path";
import { type AuditEvent, AuditLog } from "../governance/storage/audit-log.ts";
import { compareVersions, depthKeyToWrite, HOST_LINES, type HostLine, OLDEST_SUPPORTED_V1 } from "../governance/host/host-lines.ts";
import { detectHost } from "./opencode-host.ts";
import { systemClock } from "../governance/time/clock.ts";
import { MAX_CONFIG_BYTES } from "../governance/config/config.ts";
import { orgFileDistrust } from "../governance/config/org-policy.ts";
import { readConfig } from "./read-config.ts";
import { governancePaths } from "../governance/storage/governance-paths.ts";
import { stateFolderProblems } from "../governance/storage/state-health.ts";
import { configCandidates, globalConfigDir, listedUnder, listsPlugin, readOpencodeConfig } from "./opencode-config.ts";
import { PLUGIN_NAME } from "./package-files.ts";
import { lastSessionLine, readCoverage } from "./coverage-view.ts";
import { pluginInstallChecks } from "./plugin-install-check.ts";
import { agentRoleLines, agentRoles } from "./agent-roles.ts";
import { hookCount } from "./hooks-view.ts";

type Io = { out: (s: string) => void; err: (s: string) => void };
type Check = { ok: boolean; warn?: boolean; text: string };

/**
 * The organisation's policy file (issue 30): whether there is one, and whether its owner and mode let the plugin trust
 * it (root or you, writable by no group and no other user). A refused file holds every limit at its default.
 */
export function orgPolicyCheck(file: string, source: string): Check {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return { ok: true, text: `no organisation policy at ${file} (no ceiling above your own config)` };
  }
  const distrust = orgFileDistrust(st, process.getuid?.());
  const mode = (st.mode & 0o777).toString(8);
  if (distrust) return { ok: false, text: `organisation policy ${file} ${distrust}: refused (${source}; nothing may be loosened until it is fixed)` };
  if (source !== "file") return { ok: false, text: `organisation policy ${file} cannot be used (${source}): see the problem above` };
  return { ok: true, text: `organisation policy ${file} in force (owner uid ${st.uid}, mode ${mode})` };
}

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
        // A local file named for governance, or one whose text imports it (a re-export from a path of any name).
        if (/\.(ts|js|mjs)$/.test(f) && (/governance/i.test(f) || /governance/.test(fs.readFileSync(path.join(folder, f), "utf8")))) {
          return [{ ok: true, text: `local plugin ${path.join(folder, f)}` }, ...checks];
        }
      }
    }
  }
  return [
    {
      ok: false,
      text: `plugin not installed: run \`opencode-governance init\` (or add "${PLUGIN_NAME}" to the "plugin" list of opencode.json; OpenCode 2: "plugins")`,
    },
    ...checks,
  ];
}

/**
 * Which OpenCode runs here (line and version) and whether the plugin started on it: OpenCode 2 refuses an old-shaped
 * plugin silently, so a start recorded only on OpenCode 1 while OpenCode 2 is installed is the failure to report; a
 * host older than the oldest verified release is reported as the plugin said it at start (`host_unsupported`).
 */
function hostChecks(dir: string, env: NodeJS.ProcessEnv, log: AuditEvent[], lastStart: number): Check[] {
  const host = detectHost(dir, env);
  const checks: Check[] = [
    { ok: true, ...(host.binaryMissing ? { warn: true } : {}), text: `OpenCode ${host.line}${host.version ? ` ${host.version}` : ""} (${host.how})` },
  ];
  const since = log.filter((e) => e.at >= lastStart);
  const detected = since.filter((e) => e.type === "host_detected").at(-1) as (AuditEvent & { line?: number; version?: string }) | undefined;
  const startedOn = log.filter((e) => e.type === "plugin_started" && (e as { host?: number }).host === host.line).at(-1);
  if (detected?.version) checks.push({ ok: true, text: `plugin last started on OpenCode ${detected.line ?? "?"} ${detected.version}` });
  if (host.line === 2 && lastStart > 0 && !startedOn) {
    checks.push({
      ok: false,
      text: "OpenCode 2 is installed but the plugin never started on it: update opencode-governance (OpenCode 2 needs its `setup` entry)",
    });
  }
  const unsupported = since.find((e) => e.type === "host_unsupported") as (AuditEvent & { version?: string; oldestSupported?: string }) | undefined;
  if (unsupported)
    checks.push({
      ok: false,
      text: `OpenCode ${unsupported.version} is older than ${unsupported.oldestSupported}, the oldest release verified: update OpenCode`,
    });
  else if (host.line === 1 && host.version && compareVersions(host.version, OLDEST_SUPPORTED_V1) < 0) {
    checks.push({ ok: false, text: `OpenCode ${host.version} is older than ${OLDEST_SUPPORTED_V1}, the oldest release verified: update OpenCode` });
  }
  checks.push(...keyChecks(dir, env, host.line));
  const at = depthKeyToWrite(host.line);
  if (at) {
    for (const file of configCandidates("project", dir, env).filter((f) => fs.existsSync(f))) {
      const read = readOpencodeConfig(file);
      if (!read.ok) continue;
      let v: unknown = read.value;
      for (const k of at) v = v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
      if (typeof v === "number") return [...checks, { ok: true, text: `${at.join(".")} = ${v} in ${path.basename(file)}` }];
    }
    checks.push({
      ok: true,
      warn: true,
      text: `${at.join(".")} not set: OpenCode 2 allows 1 level of subagents; run \`opencode-governance init\` to raise it`,
    });
  }
  return checks;
}

/**
 * The plugin listed only under the other line's key (OpenCode 1 reads `plugin`, OpenCode 2 `plugins`: host-lines.ts):
 * what `init --host <line>` writes and what the detected host reads must agree.
 */
function keyChecks(dir: string, env: NodeJS.ProcessEnv, line: HostLine): Check[] {
  const want = HOST_LINES[line].pluginKey;
  const files = [...configCandidates("project", dir, env), ...configCandidates("global", dir, env)].filter((f) => fs.existsSync(f));
  const keys = new Set(
    files.flatMap((f) => {
      const read = readOpencodeConfig(f);
      return read.ok ? listedUnder(read.value) : [];
    }),
  );
  if (keys.size === 0 || keys.has(want)) return [];
  return [
    {
      ok: true,
      warn: true,
      text: `the plugin is listed under "${[...keys].join(", ")}", but OpenCode ${line} lists plugins under "${want}": run \`opencode-governance init --host ${line}\``,
    },
  ];
}

/**
 * Whether governance reached what the host ran (issue 25 item 5): the last session's coverage as the plugin counted it
 * (host-reported steps, tool calls and children against prefixed steps, gated calls and linked children), and the
 * `governance_gap` lines since the last start — each one a session governance found itself not governing.
 */
function coverageChecks(log: AuditEvent[], lastStart: number, summary: Awaited<ReturnType<typeof readCoverage>>): Check[] {
  const checks: Check[] = [];
  const line = lastSessionLine(summary);
  const gaps = log.filter((e) => e.at >= lastStart && e.type === "governance_gap") as (AuditEvent & { missing?: string })[];
  if (line) checks.push({ ok: (summary?.last?.gaps.length ?? 0) === 0, text: line });
  if (gaps.length > 0) {
    const kinds = [...new Set(gaps.map((g) => g.missing ?? "?"))].join(", ");
    checks.push({
      ok: false,
      text: `governance gaps reported: ${gaps.length} since the last start (missing: ${kinds}): governance is not reaching sessions on this OpenCode; see \`opencode-governance log --type governance_gap\``,
    });
  }
  return checks;
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
/**
 * A cost budget that cannot work (issue 28 §1): tokens were used, OpenCode reported cost 0 (the provider's model has
 * no prices), so the budget never fires. The plugin audits it once per session and scope; doctor says it here.
 */
function costUnreportedCheck(log: readonly AuditEvent[]): Check | undefined {
  const seen = log.filter((e) => e.type === "budget_cost_unreported");
  if (seen.length === 0) return undefined;
  const agents = [...new Set(seen.map((e) => (e.scope === "tree" ? "a task tree" : typeof e.agent === "string" ? e.agent : "?")))].slice(0, 5);
  return {
    ok: true,
    warn: true,
    text: `a cost budget cannot work (${agents.join(", ")}): the provider reported no prices (tokens used, cost 0), so it never fires; set provider.<id>.models.<id>.cost in the OpenCode config, or use a token budget`,
  };
}

export async function runDoctor(dir: string, io: Io, env: NodeJS.ProcessEnv = process.env, opts: { json?: boolean } = {}): Promise<number> {
  const paths = governancePaths(dir);
  const checks: Check[] = [...pluginChecks(dir, env), ...pluginInstallChecks(dir, env)];

  const config = await readConfig(paths.configFile, env);
  if (config.source === "defaults" && !fs.existsSync(paths.configFile)) {
    checks.push({ ok: true, warn: true, text: `no ${path.relative(dir, paths.configFile)} yet: the plugin writes it with the defaults at its first start` });
  } else if (config.problems.length === 0) checks.push({ ok: true, text: `config ${path.relative(dir, paths.configFile)} is valid` });
  const refused = new Set(config.policy.refused.map((r) => r.message));
  for (const p of config.problems) {
    // A refused loosening is not broken: the ceiling holds (`status --explain` shows both values).
    if (refused.has(p.message)) checks.push({ ok: true, warn: true, text: `refused: ${p.message}` });
    else checks.push({ ok: false, text: `config line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.message}` });
  }
  checks.push(orgPolicyCheck(config.policy.org.file, config.policy.org.source));
  const hooks = hookCount(config.hooks);
  if (hooks) checks.push({ ok: true, text: `your hooks: ${hooks} in ${config.policy.userFile} (\`status --explain\` lists them)` });
  checks.push(await confinementView(dir, env, config.config.confinement === "required"));
  // Every agent, its role and where the role came from; one OpenCode lets delegate that the file does not name is a warning.
  const roles = await agentRoles(dir, paths.configFile, config.config, env);
  checks.push({ ok: true, text: ["agents and their roles:", ...agentRoleLines(roles.map(({ add: _, ...r }) => r))].join("\n") });
  for (const r of roles.filter((r) => r.add)) checks.push({ ok: true, warn: true, text: agentRoleLines([r]).slice(1).join("\n") });
  const schema = schemaCheck(paths.configFile);
  if (schema) checks.push(schema);

  for (const p of stateFolderProblems(paths)) checks.push({ ok: false, text: `state folder: ${p}` });

  const log = await new AuditLog({ paths, clock: systemClock }).read();
  const started = log.filter((e) => e.type === "plugin_started").at(-1);
  checks.push(
    started
      ? { ok: true, text: `plugin loaded in OpenCode (last start ${new Date(started.at).toISOString()})` }
      : { ok: false, warn: true, text: "no record of the plugin ever starting: start OpenCode here once; if this stays, the plugin failed to load" },
  );
  checks.push(...hostChecks(dir, env, log, started?.at ?? 0));
  checks.push(...coverageChecks(log, started?.at ?? 0, await readCoverage(paths.root)));
  const unpriced = costUnreportedCheck(log);
  if (unpriced) checks.push(unpriced);

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
