import { requestInject, requestStop, type RequestResult } from "../../governance/stop/control-requests.ts";
import { readConfig } from "../read-config.ts";
import { type CommandContext, JSON_VERSION } from "./command-context.ts";

function report(c: CommandContext, res: RequestResult, done: (ids: string) => string, refused: string): number {
  if (c.options.json) {
    c.io.json(
      res.ok
        ? { version: JSON_VERSION, ok: true, sessionIds: res.sessionIds, warnings: res.warnings }
        : { version: JSON_VERSION, ok: false, reason: res.reason, ...(res.candidates ? { candidates: res.candidates } : {}) },
    );
    return res.ok ? 0 : 1;
  }
  if (!res.ok) {
    c.io.errLine(["red", `${refused}: `], res.reason);
    return 1;
  }
  for (const w of res.warnings) c.io.errLine(["yellow", "warning: "], w);
  c.io.line(["green", done(res.sessionIds.join(", "))]);
  return 0;
}

/** `stop <session|agent|title fragment> [--level 1|2|3] [--reason text]`. */
export async function stopCommand(c: CommandContext): Promise<number> {
  const target = c.args[0];
  if (!target) return c.usage("stop needs a session id, an agent name or part of a session's title");
  const level = c.options.level === undefined ? 1 : Number(c.options.level);
  if (level !== 1 && level !== 2 && level !== 3) return c.usage("--level must be 1, 2 or 3");
  const res = await requestStop(c.control, target, { level, reason: c.options.reason ?? "" });
  return report(c, res, (ids) => `stop requested (level ${level}) for ${ids}`, "not stopped");
}

/** `inject <session|agent|title fragment> <text>`: validated like every other way in. */
export async function injectCommand(c: CommandContext): Promise<number> {
  const [target, ...words] = c.args;
  if (!target || words.length === 0) return c.usage('inject needs a target and the text: inject <session|agent|title> "text"');
  const config = await readConfig(c.store.paths.configFile);
  const res = await requestInject(c.control, target, words.join(" "), { maxLength: config.config.inject.maxLength });
  return report(c, res, (ids) => `guidance queued for ${ids}`, "not sent");
}
