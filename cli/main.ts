#!/usr/bin/env node
import { existsSync, realpathSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import path from "node:path";
import { AuditLog } from "../governance/storage/audit-log.ts";
import { systemClock } from "../governance/time/clock.ts";
import type { ControlContext } from "../governance/stop/control-requests.ts";
import { recordTrust } from "../governance/storage/record-attestation.ts";
import { SessionStore } from "../governance/session/session-store.ts";
import type { CommandContext, Options } from "./commands/command-context.ts";
import { injectCommand, stopCommand } from "./commands/control.ts";
import { budgetCommand } from "./commands/budget.ts";
import { dashboardCommand } from "./commands/dashboard.ts";
import { logCommand } from "./commands/log.ts";
import { resumeCommand } from "./commands/resume.ts";
import { sessionsCommand } from "./commands/sessions.ts";
import { statusCommand } from "./commands/status.ts";
import { runDoctor } from "./doctor.ts";
import { runInit } from "./init.ts";
import { agentShell } from "./agent-shell.ts";
import { createOutput, type Io, type Output } from "./output.ts";

const HELP = `opencode-governance — govern OpenCode agent sessions

Usage: opencode-governance <command> [options]   (run inside an OpenCode project, or pass --dir)

Commands:
  sessions [--all] [--json]                the session tree: title, agent, depth, state, control, last tool call
  stop <session|agent|title> [--level 1|2|3] [--reason text] [--no-wait] [--json]
                                           ask a running subagent to stop (escalating L1 → L2 → L3, hard stop after the deadline);
                                           a part of a title must name exactly one running session (else the candidates are listed);
                                           waits a few seconds for OpenCode to take it ("stop begun") — exit 1 if it did not;
                                           --no-wait only queues it
  inject <session|agent|title> <text> [--json]
                                           deliver guidance with its next tool result (validated, max 500 chars)
  budget <session> [--tree] [--add key=value ...] [--json]
                                           use against each budget; --add raises a running (or budget-stopped, not a
                                           user-stopped) session's budget, --tree its task tree's (e.g. --add toolCalls=50 --add cost=1)
  budget --project|--user [--week] [--add key=value ...] [--json]
                                           today's and this week's spend against the caps over time; --add raises
                                           today's cap (--week: this week's), e.g. --project --add cost=5
  resume [--json]                          sessions you can resume, the exact \`opencode -s <id>\` and the resume context it brings
  log [--follow] [--type t[,t]] [--session id] [--limit N] [--json]
                                           the audit log (--json: one event per line); --follow waits for new events
  status [--json]                          config, counts, and the last audit events
  status --explain [--json]                every effective setting and the layer it came from (organisation,
                                           user, project), and every looser value that was refused
  doctor [--json]                          check the installation: plugin loaded, config valid, state git-ignored
  init [--global] [--dry-run] [--host 1|2] install the plugin, agents and commands into this project (--global: for
                                           every project, in ~/.config/opencode); --dry-run lists changes, writes nothing;
                                           the OpenCode line (plugin/plugins key) is detected, --host overrides it
  dashboard [--port N]                     a live local web page: session tree with Stop / Inject, resumable sessions, audit log

Options:
  --dir <path>    the OpenCode project (default: the current directory)
  --json          machine-readable output (shapes documented in docs/cli.md; version 1)

Colours only on a terminal, never when piped or when NO_COLOR is set.
`;

type Command = (c: CommandContext) => Promise<number>;
const COMMANDS: Record<string, Command> = {
  sessions: sessionsCommand,
  stop: stopCommand,
  inject: injectCommand,
  budget: budgetCommand,
  resume: resumeCommand,
  log: logCommand,
  status: statusCommand,
  dashboard: dashboardCommand,
};

/** Wraps a plain two-function Io (tests, embedding) as an Output without colours. */
function asOutput(io: Io | Output): Output {
  if ("line" in io) return io;
  const flat = (parts: (string | readonly [string, string])[]) => parts.map((p) => (typeof p === "string" ? p : p[1])).join("");
  return {
    color: false,
    out: io.out,
    err: io.err,
    line: (...p) => io.out(flat(p)),
    errLine: (...p) => io.err(flat(p)),
    json: (v) => io.out(JSON.stringify(v, null, 2)),
  };
}

export async function main(argv: string[], ioIn: Io | Output = createOutput()): Promise<number> {
  const io = asOutput(ioIn);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        dir: { type: "string" },
        global: { type: "boolean" },
        "dry-run": { type: "boolean" },
        host: { type: "string" },
        level: { type: "string" },
        reason: { type: "string" },
        all: { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        port: { type: "string" },
        follow: { type: "boolean", short: "f" },
        type: { type: "string", multiple: true },
        session: { type: "string" },
        limit: { type: "string" },
        add: { type: "string", multiple: true },
        tree: { type: "boolean" },
        project: { type: "boolean" },
        user: { type: "boolean" },
        week: { type: "boolean" },
        explain: { type: "boolean" },
        "no-wait": { type: "boolean" },
      },
    });
  } catch (error) {
    return usage(io, argumentMistake(error as NodeJS.ErrnoException));
  }
  const options: Options = parsed.values;
  const [command, ...args] = parsed.positionals;
  if (options.help || !command) {
    io.out(HELP);
    return command || options.help ? 0 : 2;
  }
  const dir = path.resolve(options.dir ?? process.cwd());
  const problem = projectProblem(dir, command === "init" || command === "doctor");
  if (problem) {
    io.err(problem);
    return 2;
  }
  if (command === "doctor") return runDoctor(dir, io, process.env, { json: options.json });
  if (command === "init") {
    const host = parsed.values.host;
    if (host !== undefined && host !== "1" && host !== "2") {
      io.err(`--host must be 1 or 2 (the OpenCode line), not ${JSON.stringify(host)}`);
      return 2;
    }
    return runInit(dir, io, {
      global: parsed.values.global ?? false,
      dryRun: parsed.values["dry-run"] ?? false,
      ...(host ? { host: { line: host === "2" ? 2 : 1, version: null, how: `--host ${host}` } as const } : {}),
    });
  }
  const run = COMMANDS[command];
  if (!run) return usage(io, `unknown command ${JSON.stringify(command)}`);

  const store = new SessionStore({
    projectDir: dir,
    clock: systemClock,
    onProblem: (p) => io.errLine(["yellow", "warning: "], `${p.kind} ${p.file}: ${p.reason}`),
  });
  const audit = new AuditLog({ paths: store.paths, clock: systemClock });
  const control: ControlContext = { paths: store.paths, store, audit, clock: systemClock, by: `cli:${process.env.USER ?? "user"}`, trust: recordTrust() };
  if (acts(command, options)) {
    // Inside a governed agent's shell the CLI is that agent, not the user (issue 27): refused, audited as its attempt.
    const agent = agentShell(dir);
    if (agent) {
      await audit.append("control_refused", { sessionId: agent.sessionId, via: "cli", command, target: args[0] ?? null, by: `agent:${agent.sessionId}` });
      io.err(
        `refused: this shell belongs to governed OpenCode session ${agent.sessionId}; an agent may not ${ACTS[command] ?? command} through the governance CLI. Run it from your own terminal (or use the dashboard).`,
      );
      return 1;
    }
  }
  return run({ dir, store, audit, control, io, options, args, usage: (message) => usage(io, message) });
}

const ACTS: Record<string, string> = {
  stop: "stop sessions",
  inject: "send guidance to sessions",
  budget: "raise budgets",
  dashboard: "serve the dashboard (it stops and steers sessions)",
};

/** The commands that change what a session may do: stop, inject, a budget raise, and the dashboard (which can stop and inject). */
function acts(command: string, options: Options): boolean {
  return command === "stop" || command === "inject" || command === "dashboard" || (command === "budget" && (options.add?.length ?? 0) > 0);
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

/**
 * A usage mistake is one line on stderr — the mistake, then where the help is — and exit code 2: the help itself
 * would bury the one line that matters (`--help` prints it).
 */
function usage(io: Io, message: string): number {
  io.err(`opencode-governance: ${message} (run \`opencode-governance --help\`)`);
  return 2;
}

/** node:util's parseArgs errors in the CLI's words: the option named, without its advice about `--`. */
function argumentMistake(error: NodeJS.ErrnoException): string {
  const option = /'(-[^' ]+)/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}`;
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option)
    return /does not take/.test(error.message) ? `${option} takes no value` : `${option} needs a value`;
  return error.message.split(". ")[0] ?? error.message;
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
