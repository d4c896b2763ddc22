import type { ControlContext } from "../../governance/stop/control-requests.ts";
import type { AuditLog } from "../../governance/storage/audit-log.ts";
import type { SessionStore } from "../../governance/session/session-store.ts";
import type { Output } from "../output.ts";

/** The parsed command line every command receives. */
export type Options = {
  dir?: string;
  level?: string;
  reason?: string;
  all?: boolean;
  json?: boolean;
  help?: boolean;
  port?: string;
  follow?: boolean;
  type?: string[];
  session?: string;
  limit?: string;
  /** `budget --add key=value` (repeatable) and `--tree`. */
  add?: string[];
  tree?: boolean;
  /** `budget --project|--user [--week]`: the caps over time (issue 44) instead of a session's budgets. */
  project?: boolean;
  user?: boolean;
  week?: boolean;
  /** `status --explain`: every effective setting and the layer it came from. */
  explain?: boolean;
  /** `stop --no-wait`: queue the request without waiting for OpenCode to take it. */
  "no-wait"?: boolean;
};

/** What a command needs: the project, its store and audit log, the control context, the output and its arguments. */
export type CommandContext = {
  dir: string;
  store: SessionStore;
  audit: AuditLog;
  control: ControlContext;
  io: Output;
  options: Options;
  args: string[];
  usage(message: string): number;
};

/**
 * Version of every `--json` shape. Fields are only ever added within a version; a rename or removal bumps it.
 * Documented in docs/cli.md.
 */
export const JSON_VERSION = 1 as const;
