import { budgetSummary, budgetView } from "../../governance/budget/budget-view.ts";
import { renderTree, trustOf } from "../../governance/stop/control-requests.ts";
import { sessionRows } from "../dashboard-snapshot.ts";
import { processGoneOf } from "../process-gone.ts";
import { auditHostLine } from "../audit-host.ts";
import { readConfig } from "../read-config.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

/**
 * `sessions [--all] [--json]`: the tree, each line with its use against its limited budgets (docs/budgets.md). JSON
 * lists every session (finished ones too) with a `running` flag and its `budget` view.
 */
export async function sessionsCommand(c: CommandContext): Promise<number> {
  const records = await c.store.list();
  const now = c.control.clock.now();
  const { config } = await readConfig(c.store.paths.configFile);
  const processGone = await processGoneOf(records);
  // Tools named as the host the plugin last ran on offers them (`shell` on OpenCode 2; records keep the core's `bash`).
  const hostLine = auditHostLine(await c.audit.read());
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, now, sessions: sessionRows(records, { config, now, trust: trustOf(c.control), processGone, hostLine }) });
    return 0;
  }
  const note = (r: (typeof records)[number]) => {
    const summary = budgetSummary(budgetView(r, config, now));
    return summary ? `budget: ${summary}` : "";
  };
  const lines = renderTree(records, { now, all: c.options.all ?? false, note, trust: trustOf(c.control), processGone, hostLine });
  if (lines.length === 0) {
    c.io.line(["dim", c.options.all ? "No governed sessions." : "No running governed sessions (use --all for finished ones)."]);
    return 0;
  }
  for (const line of lines) c.io.line(line);
  return 0;
}
