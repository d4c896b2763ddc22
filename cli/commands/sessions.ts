import { renderTree } from "../../governance/stop/control-requests.ts";
import { sessionRows } from "../dashboard-snapshot.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

/** `sessions [--all] [--json]`: the tree. JSON lists every session (finished ones too) with a `running` flag. */
export async function sessionsCommand(c: CommandContext): Promise<number> {
  const records = await c.store.list();
  const now = c.control.clock.now();
  if (c.options.json) {
    c.io.json({ version: JSON_VERSION, now, sessions: sessionRows(records) });
    return 0;
  }
  const lines = renderTree(records, { now, all: c.options.all ?? false });
  if (lines.length === 0) {
    c.io.line(["dim", c.options.all ? "No governed sessions." : "No running governed sessions (use --all for finished ones)."]);
    return 0;
  }
  for (const line of lines) c.io.line(line);
  return 0;
}
