#!/usr/bin/env node
import { existsSync, realpathSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import path from "node:path";
import { AuditLog } from "../governance/storage/audit-log.ts";
import { systemClock } from "../governance/time/clock.ts";
import { renderTree, requestInject, requestStop, type ControlContext } from "../governance/stop/control-requests.ts";
import { readConfig } from "./read-config.ts";
import { SessionStore } from "../governance/storage/session-store.ts";
import { startDashboard } from "./dashboard-server.ts";
import { runDoctor } from "./doctor.ts";
import { runInit } from "./init.ts";

const HELP = `opencode-governance — govern OpenCode agent sessions

Usage: opencode-governance <command> [options]   (run inside an OpenCode project, or pass --dir)

Commands:
  sessions [--all]                         the session tree: agent, depth, state, control, last tool call
  stop <session|agent> [--level 1|2|3] [--reason text]
                                           ask a running subagent to stop (escalating L1 → L2 → L3, hard stop after the deadline)
  inject <session|agent> <text>            deliver guidance with its next tool result (validated, max 500 chars)
  status                                   config, counts, and the last audit events
  doctor                                   check the installation: plugin loaded, config valid, state git-ignored
  init                                     install the plugin and the governed agents into this project
  dashboard [--port N]                     a local web page with the session tree and Stop / Inject buttons

Options:
  --dir <path>    the OpenCode project (default: the current directory)
  --json          machine-readable output where supported
`;

type Io = { out: (s: string) => void; err: (s: string) => void };

export async function main(argv: string[], io: Io = { out: (s) => console.log(s), err: (s) => console.error(s) }): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        dir: { type: "string" },
        level: { type: "string" },
        reason: { type: "string" },
        all: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        port: { type: "string" },
      },
    });
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    io.out(HELP);
    return command || values.help ? 0 : 2;
  }
  const dir = path.resolve(values.dir ?? process.cwd());
  const problem = projectProblem(dir, command === "init" || command === "doctor");
  if (problem) {
    io.err(problem);
    return 2;
  }
  const store = new SessionStore({ projectDir: dir, clock: systemClock, onProblem: (p) => io.err(`warning: ${p.kind} ${p.file}: ${p.reason}`) });
  const audit = new AuditLog({ paths: store.paths, clock: systemClock });
  const ctx: ControlContext = { paths: store.paths, store, audit, clock: systemClock, by: `cli:${process.env.USER ?? "user"}` };

  switch (command) {
    case "sessions": {
      const records = await store.list();
      if (values.json) {
        io.out(JSON.stringify(records, null, 2));
        return 0;
      }
      const lines = renderTree(records, { now: systemClock.now(), all: values.all ?? false });
      io.out(lines.length > 0 ? lines.join("\n") : values.all ? "No governed sessions." : "No running governed sessions (use --all for finished ones).");
      return 0;
    }
    case "stop": {
      const target = rest[0];
      if (!target) return usage(io, "stop needs a session id or an agent name");
      const level = values.level === undefined ? 1 : Number(values.level);
      if (level !== 1 && level !== 2 && level !== 3) return usage(io, "--level must be 1, 2 or 3");
      const res = await requestStop(ctx, target, { level, reason: values.reason ?? "" });
      if (!res.ok) {
        io.err(`not stopped: ${res.reason}`);
        return 1;
      }
      io.out(`stop requested (level ${level}) for ${res.sessionIds.join(", ")}`);
      return 0;
    }
    case "inject": {
      const [target, ...words] = rest;
      if (!target || words.length === 0) return usage(io, 'inject needs a target and the text: inject <session|agent> "text"');
      const config = await readConfig(store.paths.configFile);
      const res = await requestInject(ctx, target, words.join(" "), { maxLength: config.config.inject.maxLength });
      if (!res.ok) {
        io.err(`not sent: ${res.reason}`);
        return 1;
      }
      for (const w of res.warnings) io.err(`warning: ${w}`);
      io.out(`guidance queued for ${res.sessionIds.join(", ")}`);
      return 0;
    }
    case "status": {
      const config = await readConfig(store.paths.configFile);
      const records = await store.list();
      const events = (await audit.read()).slice(-10);
      io.out(`project: ${dir}`);
      io.out(`config: ${store.paths.configFile} (${config.source}${config.problems.length ? `, ${config.problems.length} problem(s)` : ""})`);
      for (const p of config.problems) io.out(`  line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.message}`);
      io.out(`sessions: ${records.length} recorded, ${records.filter((r) => r.control === "active" || r.control === "stopping").length} active`);
      io.out("last audit events:");
      for (const e of events) io.out(`  ${new Date(e.at).toISOString()} ${e.type}${e.sessionId ? ` ${e.sessionId}` : ""}`);
      return 0;
    }
    case "doctor":
      return runDoctor(dir, io);
    case "dashboard": {
      const port = values.port === undefined ? 0 : Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) return usage(io, "--port must be a port number");
      const config = await readConfig(store.paths.configFile);
      const dashboard = await startDashboard({ ...ctx, by: `dashboard:${process.env.USER ?? "user"}` }, { port, maxInjectLength: config.config.inject.maxLength });
      io.out(`dashboard for ${dir}\nopen ${dashboard.url}\n(local only; the token in the URL is required; Ctrl-C to stop)`);
      await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
      await dashboard.close();
      return 0;
    }
    case "init":
      return runInit(dir, io);
    default:
      return usage(io, `unknown command: ${command}`);
  }
}

/**
 * Commands act on an existing OpenCode project and never create one by accident (a typo in --dir must not leave
 * folders behind); `init` may start from a bare folder, and `doctor` diagnoses any folder without writing to it.
 */
function projectProblem(dir: string, anyFolder: boolean): string | undefined {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return `no such folder: ${dir}`;
  }
  if (!stat.isDirectory()) return `not a folder: ${dir}`;
  if (anyFolder) return undefined;
  const markers = ["opencode.json", "opencode.jsonc", ".opencode"];
  if (!markers.some((m) => existsSync(path.join(dir, m)))) {
    return `not an OpenCode project (no opencode.json or .opencode/ in ${dir}); run \`opencode-governance init\` there first`;
  }
  return undefined;
}

function usage(io: Io, message: string): number {
  io.err(`${message}\n\n${HELP}`);
  return 2;
}

function invokedDirectly(): boolean {
  try {
    return Boolean(process.argv[1]) && realpathSync(process.argv[1]!) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}
if (invokedDirectly()) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(`opencode-governance: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    },
  );
}
